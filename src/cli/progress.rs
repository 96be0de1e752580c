//! Progress on stderr for work that takes more than about a second: a bar on a terminal; else
//! (a batch job's log) a plain line every half minute of it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A bar that stays hidden for its first second.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: std::sync::atomic::AtomicBool,
    enabled: bool,
    /// Not a terminal (and not quiet): when the last plain line was written (None: none yet).
    plain: Option<(std::sync::Mutex<Option<Instant>>, Duration)>,
}

const DELAY: Duration = Duration::from_secs(1);
/// How often a plain line is written where stderr is not a terminal, the first after as long:
/// 30 s, or `LOGGPS_PROGRESS_SECONDS`.
fn plain_every() -> Duration {
    let s = std::env::var("LOGGPS_PROGRESS_SECONDS").ok();
    let s = s
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0);
    Duration::from_secs_f64(s.unwrap_or(30.0))
}

impl Progress {
    /// A bar counting `total` units (`None`: a spinner) labelled `label`.
    pub fn new(label: &str, total: Option<u64>) -> Progress {
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()),
        };
        let template = if total.is_some() {
            "{msg} [{bar:30}] {human_pos}/{human_len} ({elapsed}, eta {eta})"
        } else {
            "{spinner} {msg} ({elapsed})"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(label.to_string());
        Progress {
            bar,
            started: Instant::now(),
            shown: false.into(),
            enabled: std::io::stderr().is_terminal() && !super::quiet(),
            plain: (!std::io::stderr().is_terminal() && !super::quiet())
                .then(|| (std::sync::Mutex::new(None), plain_every())),
        }
    }

    /// Where stderr is not a terminal, a line saying how far the work is, every
    /// [`plain_every`] of it.
    fn plain_line(&self) {
        let Some((last, every)) = &self.plain else {
            return;
        };
        let Ok(mut last) = last.try_lock() else {
            return;
        };
        let since = last.unwrap_or(self.started);
        if since.elapsed() < *every {
            return;
        }
        *last = Some(Instant::now());
        let secs = self.started.elapsed().as_secs();
        let done = match self.bar.length() {
            Some(n) if n > 0 => format!(
                ": {} of {n} ({:.0}%)",
                self.bar.position(),
                100.0 * self.bar.position() as f64 / n as f64
            ),
            _ => String::new(),
        };
        eprintln!(
            "{}{done}, {}m{:02}s so far",
            self.bar.message(),
            secs / 60,
            secs % 60
        );
    }

    /// Sets the position; shows the bar once a second has passed.
    pub fn set(&self, pos: u64) {
        self.bar.set_position(pos);
        self.tick();
    }

    /// Shows the bar if the work has taken over a second (call from time to time).
    pub fn tick(&self) {
        self.plain_line();
        if self.enabled
            && self.started.elapsed() > DELAY
            && !self.shown.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    /// Runs `f`, showing a spinner if it takes more than a second.
    pub fn around<T>(label: &str, f: impl FnOnce() -> T + Send) -> T
    where
        T: Send,
    {
        let p = Progress::new(label, None);
        let (watched, (done, wait)) = (&p, std::sync::mpsc::channel::<()>());
        std::thread::scope(|s| {
            // Every 50 ms, and woken at once when `f` returns (its sender dropped): a sleep
            // would hold the command up to 50 ms after its work.
            s.spawn(move || {
                use std::sync::mpsc::RecvTimeoutError::Timeout;
                while let Err(Timeout) = wait.recv_timeout(Duration::from_millis(50)) {
                    watched.tick();
                }
            });
            let out = f();
            drop(done);
            p.bar.finish_and_clear();
            out
        })
    }

    /// Changes the label (and shows the bar once a second has passed).
    pub fn label(&self, label: &str) {
        self.bar.set_message(label.to_string());
        self.tick();
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
