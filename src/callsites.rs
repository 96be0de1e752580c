//! Call sites ranked by what their calls cost in the predicted run (`loggps-predict
//! callsites`): each step of the replay is summed by the site its event was called from
//! ([`Tally`]); the sites of all ranks that lie at one address of one file are taken together,
//! and named by function, file and line from that file's debug information, or by function
//! from its symbol table where it has none ([`Symbolizer`]).

use crate::replay::Step;
use crate::trace::sites::{Named, Object, Sites, UNKNOWN};
use crate::trace::{Routine, Trace};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the calls of one site cost in the predicted run, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub calls: u64,
    pub communication_ns: f64,
    pub sender_sync_ns: f64,
    pub receiver_sync_ns: f64,
    /// The routines called there, bit `code` each.
    pub routines: u128,
}

impl Cost {
    /// One call's step (its routine `routine`).
    pub fn add(&mut self, s: &Step, routine: Routine) {
        self.calls += 1;
        self.communication_ns += s.communication_ns;
        self.sender_sync_ns += s.sender_sync_ns;
        self.receiver_sync_ns += s.receiver_sync_ns;
        self.routines |= 1 << (routine as u8);
    }

    fn merge(&mut self, o: &Cost) {
        self.calls += o.calls;
        self.communication_ns += o.communication_ns;
        self.sender_sync_ns += o.sender_sync_ns;
        self.receiver_sync_ns += o.receiver_sync_ns;
        self.routines |= o.routines;
    }
}

/// The replay's steps summed by rank and site: an observer of [`crate::replay::replay_observed`].
pub struct Tally<'a> {
    trace: &'a Trace,
    sites: &'a Sites,
    /// Rank `r`'s sites are `costs[first[r]..first[r + 1]]`, in the order of its site table.
    first: Vec<usize>,
    costs: Mutex<Vec<Cost>>,
    /// The steps of events without a site.
    unknown: Mutex<Cost>,
}

impl<'a> Tally<'a> {
    pub fn new(trace: &'a Trace, sites: &'a Sites) -> Tally<'a> {
        let mut first = vec![0];
        for table in &sites.addresses {
            first.push(first.last().expect("one") + table.len());
        }
        let n = *first.last().expect("one");
        Tally {
            trace,
            sites,
            first,
            costs: Mutex::new(vec![Cost::default(); n]),
            unknown: Mutex::new(Cost::default()),
        }
    }

    /// Takes a batch of steps.
    pub fn observe(&self, steps: &[Step]) {
        let offsets = self.trace.events.offsets();
        let mut unknown = Cost::default();
        let mut costs = self.costs.lock().expect("not poisoned");
        for s in steps {
            let (r, e) = (s.rank as usize, offsets[s.rank as usize] + s.event as usize);
            let routine = self.trace.events.routine_at(e);
            match self.sites.of_event[e] {
                UNKNOWN => unknown.add(s, routine),
                i => costs[self.first[r] + i as usize].add(s, routine),
            }
        }
        self.unknown.lock().expect("not poisoned").merge(&unknown);
    }

    /// The sites with calls, those at one place together ([`rows`]), ranked by `key`; and the
    /// cost of the calls without a site.
    pub fn rows(self, symbolizer: &mut Symbolizer, key: SortKey) -> (Vec<Row>, Cost) {
        let costs = &self.costs.into_inner().expect("not poisoned");
        let first = &self.first;
        let items = (0..self.sites.addresses.len())
            .flat_map(|r| (first[r]..first[r + 1]).map(move |k| (r, k - first[r], costs[k])));
        let rows = rows(self.sites, items, symbolizer, key);
        (rows, self.unknown.into_inner().expect("not poisoned"))
    }
}

/// The costs `(rank, site index, cost)` of `items`, summed by place: the sites of all ranks
/// named alike ([`Symbolizer::site`]: one address of one file, or calls on one line) together;
/// ranked by `key`, largest first.
pub fn rows(
    sites: &Sites,
    items: impl Iterator<Item = (usize, usize, Cost)>,
    symbolizer: &mut Symbolizer,
    key: SortKey,
) -> Vec<Row> {
    let mut by_place: HashMap<String, (Place, Cost, Vec<u32>)> = HashMap::new();
    for (r, i, c) in items.filter(|x| x.2.calls > 0) {
        let place = symbolizer.site_at(sites, r, i);
        let entry = by_place
            .entry(place.display())
            .or_insert_with(|| (place.clone(), Cost::default(), Vec::new()));
        // Of several addresses with one name, the row shows the lowest (whatever the order
        // they come in).
        if place.address < entry.0.address {
            entry.0 = place;
        }
        entry.1.merge(&c);
        entry.2.push(r as u32);
    }
    let mut rows: Vec<Row> = by_place
        .into_values()
        .map(|(place, cost, mut ranks)| {
            ranks.sort_unstable();
            ranks.dedup();
            Row::new(place, &cost, ranks.len() as u32)
        })
        .collect();
    rows.sort_by(|a, b| {
        key.of(b)
            .total_cmp(&key.of(a))
            .then_with(|| a.site.cmp(&b.site))
    });
    rows
}

/// Every site's name ([`Place::display`]), by rank and index in its rank's table: for a
/// report that labels each call (the timeline).
pub fn names(sites: &Sites, symbolizer: &mut Symbolizer) -> Vec<Vec<String>> {
    (0..sites.addresses.len())
        .map(|r| {
            (0..sites.addresses[r].len())
                .map(|i| symbolizer.site_at(sites, r, i).display())
                .collect()
        })
        .collect()
}

/// What the sites are ranked by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// Sender and receiver synchronization together
    Sync,
    /// Sender synchronization
    Sender,
    /// Receiver synchronization
    Receiver,
    /// Communication (the model's cost of the calls, synchronization left out)
    Communication,
    /// Number of calls
    Count,
    /// Communication and synchronization together
    Total,
}

impl SortKey {
    fn of(self, r: &Row) -> f64 {
        match self {
            SortKey::Sync => r.sender_sync_s + r.receiver_sync_s,
            SortKey::Sender => r.sender_sync_s,
            SortKey::Receiver => r.receiver_sync_s,
            SortKey::Communication => r.communication_s,
            SortKey::Count => r.calls as f64,
            SortKey::Total => r.communication_s + r.sender_sync_s + r.receiver_sync_s,
        }
    }
}

/// A place in the program: a function, and the file and line of the call where the debug
/// information has them; else the object and the address in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub object: String,
    /// The address in the object's file (the lowest of the sites there).
    pub address: u64,
}

impl Place {
    fn unnamed(object: &str, address: u64) -> Place {
        Place {
            function: None,
            file: None,
            line: None,
            object: object.to_string(),
            address,
        }
    }

    /// A site the trace names ([`Named`]): no object, its address the site's index.
    fn named(n: &Named, index: usize) -> Place {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Place {
            function: text(&n.function),
            file: text(&n.file),
            line: (n.line > 0).then_some(n.line),
            object: String::new(),
            address: index as u64,
        }
    }

    /// `function file:line`, or what of it is known.
    pub fn display(&self) -> String {
        let f = self.function.as_deref().unwrap_or("?");
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{f} {file}:{line}"),
            (Some(file), None) => format!("{f} {file}"),
            _ if self.object.is_empty() => f.to_string(),
            _ => {
                let base = self.object.rsplit('/').next().unwrap_or(&self.object);
                format!("{f} ({base}+{:#x})", self.address)
            }
        }
    }
}

/// One place's calls, over every rank.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// As [`Place::display`].
    pub site: String,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub object: String,
    /// Hex, in the object's file ("" for a site the trace names).
    pub address: String,
    pub routines: Vec<&'static str>,
    pub ranks: u32,
    pub calls: u64,
    pub communication_s: f64,
    pub sender_sync_s: f64,
    pub receiver_sync_s: f64,
}

impl Row {
    fn new(p: Place, c: &Cost, ranks: u32) -> Row {
        Row {
            site: p.display(),
            routines: Routine::ALL
                .iter()
                .filter(|&&r| c.routines & (1 << (r as u8)) != 0)
                .map(|r| r.mpi_name())
                .collect(),
            ranks,
            calls: c.calls,
            communication_s: c.communication_ns * 1e-9,
            sender_sync_s: c.sender_sync_ns * 1e-9,
            receiver_sync_s: c.receiver_sync_ns * 1e-9,
            // A site the trace names has no address.
            address: match p.object.is_empty() {
                true => String::new(),
                false => format!("{:#x}", p.address),
            },
            function: p.function,
            file: p.file,
            line: p.line,
            object: p.object,
        }
    }
}

/// Names addresses of object files, each file opened once. A file is looked for as a debug
/// file named by its build id (`.build-id/ab/cdef….debug` under each search folder and
/// /usr/lib/debug), then at its recorded path, then by its name in each search folder; one
/// whose build id differs from the recorded one (rebuilt since the trace) is not used.
pub struct Symbolizer {
    search: Vec<PathBuf>,
    loaded: HashMap<(String, String), Option<addr2line::Loader>>,
    /// Each address of each file (path, build id) named so far.
    places: HashMap<(String, String, u64), Place>,
    /// What could not be done, one line an object.
    pub warnings: Vec<String>,
}

impl Symbolizer {
    pub fn new(search: Vec<PathBuf>) -> Symbolizer {
        Symbolizer {
            search,
            loaded: HashMap::new(),
            places: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// The place of site `i` of rank `r`'s table: as the trace names it, or where its address
    /// lies ([`Symbolizer::site`]).
    pub fn site_at(&mut self, sites: &Sites, r: usize, i: usize) -> Place {
        match sites.named(r, i) {
            Some(n) => Place::named(n, i),
            None => self.site(sites, r, sites.addresses[r][i]),
        }
    }

    /// The place of return address `a` of rank `r`: where it lies in the object that holds
    /// it (each address of each file named once); unnamed where no object holds it.
    pub fn site(&mut self, sites: &Sites, r: usize, a: u64) -> Place {
        let Some(l) = sites.locate(r, a) else {
            return Place::unnamed(&format!("rank {r}"), a);
        };
        let o = &sites.objects[r][l.object];
        let key = (o.path.clone(), o.build_id.clone(), l.file_address);
        if let Some(p) = self.places.get(&key) {
            return p.clone();
        }
        let p = self.place(o, l.file_address);
        self.places.insert(key, p.clone());
        p
    }

    /// The place of `address` in object `o`'s file.
    fn place(&mut self, o: &Object, address: u64) -> Place {
        let key = (o.path.clone(), o.build_id.clone());
        if !self.loaded.contains_key(&key) {
            let loader = self.open(o);
            self.loaded.insert(key.clone(), loader);
        }
        let mut place = Place::unnamed(&o.path, address);
        let Some(loader) = &self.loaded[&key] else {
            return place;
        };
        if let Ok(mut frames) = loader.find_frames(address)
            && let Ok(Some(frame)) = frames.next()
        {
            place.function = frame
                .function
                .as_ref()
                .and_then(|f| f.demangle().ok())
                .map(|f| f.into_owned());
            if let Some(l) = frame.location {
                place.file = l.file.map(shorten);
                place.line = l.line;
            }
        }
        if place.function.is_none() {
            place.function = loader
                .find_symbol(address)
                .map(|s| addr2line::demangle_auto(s.into(), None).into_owned());
        }
        place
    }

    fn open(&mut self, o: &Object) -> Option<addr2line::Loader> {
        // A separate debug file named by the build id (Debian's -dbgsym packages put them in
        // /usr/lib/debug): the object's addresses, with the DWARF and symbols a stripped
        // object lacks.
        if o.build_id.len() > 2 && o.build_id.is_ascii() {
            let (dir, file) = o.build_id.split_at(2);
            let roots = self.search.iter().map(PathBuf::as_path);
            for root in roots.chain([Path::new("/usr/lib/debug")]) {
                let f = root
                    .join(".build-id")
                    .join(dir)
                    .join(format!("{file}.debug"));
                if let Some(l) = f
                    .is_file()
                    .then(|| addr2line::Loader::new(&f).ok())
                    .flatten()
                {
                    return Some(l);
                }
            }
        }
        let recorded = Path::new(&o.path);
        let name = recorded.file_name()?;
        let candidates =
            std::iter::once(recorded.to_path_buf()).chain(self.search.iter().map(|d| d.join(name)));
        let mut differs = None;
        for c in candidates.filter(|c| c.is_file()) {
            match build_id(&c) {
                Some(id) if !o.build_id.is_empty() && id != o.build_id => {
                    differs.get_or_insert(c);
                }
                _ => match addr2line::Loader::new(&c) {
                    Ok(l) => return Some(l),
                    Err(e) => {
                        self.warnings
                            .push(format!("cannot read {}: {e}", c.display()));
                        return None;
                    }
                },
            }
        }
        self.warnings.push(match differs {
            Some(c) => format!(
                "{}: not the file traced (its build id differs: rebuilt since?); its call sites are shown as addresses (--search DIR names a folder with the traced one)",
                c.display()
            ),
            None => format!(
                "{} not found; its call sites are shown as addresses (--search DIR names a folder holding it)",
                o.path
            ),
        });
        None
    }
}

/// The GNU build id of the object file at `path`, in hex.
fn build_id(path: &Path) -> Option<String> {
    use object::Object as _;
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// A source file's path, relative to the current folder where it lies below it.
fn shorten(file: &str) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|d| Path::new(file).strip_prefix(d).ok().map(Path::to_path_buf))
        .map_or_else(|| file.to_string(), |p| p.display().to_string())
}
