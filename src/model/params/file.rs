//! The parameter TOML: reading one set or several (`[[set]]`, `[[bands]]`), checking each
//! value as it is read, and writing them back as `calibrate` does.

use super::super::{BAND_NAMES, Band, Bands, BySize, Class, NAMES, Params, SizeParam};
use super::{SPLIT_NAMES, cores_invalid, oc_invalid};
use crate::error::Error;
use std::path::Path;

/// Reads a parameter TOML of one set: the eight names at the top level or in a `[params]`
/// table, or bands.
pub fn read_params_file(path: &Path) -> Result<Params, Error> {
    let mut sets = read_param_sets(path)?;
    match sets.len() {
        1 => Ok(sets.remove(0)),
        n => Err(Error::Params(format!(
            "{}: holds {n} parameter sets ([[set]]), where one is expected here",
            path.display()
        ))),
    }
}

/// Reads a parameter TOML of one set or of several (`[[set]]` tables, each a set as a file of
/// one holds it: the model's §12).
pub fn read_param_sets(path: &Path) -> Result<Vec<Params>, Error> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Params(format!("{name}: cannot read parameters: {e}")))?;
    parse_param_sets(&text).map_err(|e| Error::Params(format!("{name}: {e}")))
}

/// Parses a parameter TOML of one set or several (see [`read_param_sets`]).
pub fn parse_param_sets(text: &str) -> Result<Vec<Params>, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    let Some(sets) = value.get("set") else {
        return Ok(vec![params_of_table(value)?]);
    };
    let list = match sets.as_array() {
        Some(l) if !l.is_empty() && value.len() == 1 => l,
        _ => {
            return Err(
                "a file of several sets holds only [[set]] tables, each a whole set".into(),
            );
        }
    };
    list.iter()
        .enumerate()
        .map(|(j, t)| match t.as_table() {
            Some(t) => params_of_table(t.clone()).map_err(|e| format!("set {}: {e}", j + 1)),
            None => Err(format!("set {} must be a table", j + 1)),
        })
        .collect()
}

/// Parses a parameter TOML of one set (see [`read_params_file`]).
pub fn parse_params_toml(text: &str) -> Result<Params, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    params_of_table(value)
}

/// One set from its TOML table.
fn params_of_table(value: toml::Table) -> Result<Params, String> {
    let table = match value.get("params") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(_) => return Err("`params` must be a table".into()),
        None => value,
    };
    let x = Extras::of_table(&table)?;
    let num = |n: &str| number(&table, n);
    let bytes = |n: &str| byte_count(&table, n);
    if let Some(bands) = table.get("bands") {
        return banded_of_table(&table, bands, &x);
    }
    if table.contains_key("eager_bands") {
        return Err(
            "`eager_bands` extend a set in bands ([[bands]]), not the paper's parameters".into(),
        );
    }
    let p = x.onto(Params::from_named(num, bytes)?);
    // `Od` and `Op` (the model's §13) in the paper's form: its two bands, each with them.
    let mut split = p;
    for name in SPLIT_NAMES {
        if table.contains_key(name) {
            let v = num(name)?;
            split = split.in_bands().with_bands(|b| b.set(name, v))?;
        }
    }
    match split.invalid() {
        Some(why) if split.bands.is_some() => Err(format!("invalid parameters: {why}")),
        _ => Ok(split),
    }
}

/// Why an optional cost of a set named `name` cannot be used: it is a time (or a time a
/// byte), 0 or more; `meaning` says what it costs.
fn cost_invalid(name: &str, v: Option<f64>, meaning: &str) -> Option<String> {
    v.filter(|v| !(v.is_finite() && *v >= 0.0))
        .map(|v| format!("parameter {name} = {v} must be a finite number ≥ 0 ({meaning})"))
}

/// Why a receive's post cost cannot be used.
pub fn post_invalid(post: Option<f64>) -> Option<String> {
    cost_invalid("post", post, "ns a receive's MPI_Irecv costs")
}

/// Why a completion call's least cost cannot be used.
pub fn wait_invalid(wait: Option<f64>) -> Option<String> {
    cost_invalid("wait", wait, "ns a completion call costs at least")
}

/// Why a collective's cost of writing into lines its peer has read cannot be used.
pub fn held_invalid(held: Option<f64>) -> Option<String> {
    let meaning = "ns per byte a collective's write into lines its peer has just read costs more";
    cost_invalid("held", held, meaning)
}

/// Why a collective's cost of reducing into lines its peer has read cannot be used.
pub fn held_reduce_invalid(held_reduce: Option<f64>) -> Option<String> {
    let meaning =
        "ns per byte a collective's reduction into lines its peer has just read costs more";
    cost_invalid("held_reduce", held_reduce, meaning)
}

/// Why a collective's temporary's cost cannot be used.
pub fn alloc_invalid(alloc: Option<f64>) -> Option<String> {
    let meaning = "ns a collective's temporary buffer costs to allocate and free";
    cost_invalid("alloc", alloc, meaning)
}

/// Why an aliased single copy's cost cannot be used.
pub fn alias_invalid(alias: Option<f64>) -> Option<String> {
    let meaning =
        "ns per byte a rendezvous message's single copy costs more where its buffers alias";
    cost_invalid("alias", alias, meaning)
}

/// What a set's table holds beside its LogGPS parameters (or bands), read and checked
/// first, alike for both forms.
struct Extras {
    poll: Option<f64>,
    gamma: Option<BySize>,
    oc: Option<f64>,
    copy: Option<BySize>,
    cores: Option<f64>,
    class: Option<Class>,
    progress_at_calls: bool,
    rendezvous_sender: Option<BySize>,
    bounce: Option<BySize>,
    bounce_clean: Option<BySize>,
    clean: Option<BySize>,
    clean_oneway: Option<BySize>,
    departs_upto: Option<u64>,
    post: Option<f64>,
    wait: Option<f64>,
    held: Option<f64>,
    held_reduce: Option<f64>,
    alloc: Option<f64>,
    alias: Option<f64>,
    drained: Option<BySize>,
}

impl Extras {
    /// `p` with these in place of its own.
    fn onto(&self, p: Params) -> Params {
        Params {
            poll: self.poll,
            gamma: self.gamma,
            oc: self.oc,
            copy: self.copy,
            cores: self.cores,
            class: self.class,
            progress_at_calls: self.progress_at_calls,
            rendezvous_sender: self.rendezvous_sender,
            bounce: self.bounce,
            bounce_clean: self.bounce_clean,
            clean: self.clean,
            clean_oneway: self.clean_oneway,
            departs_upto: self.departs_upto,
            post: self.post,
            wait: self.wait,
            held: self.held,
            held_reduce: self.held_reduce,
            alloc: self.alloc,
            alias: self.alias,
            drained: self.drained,
            ..p
        }
    }

    /// The class, the optional costs (each checked), the progress and the rendezvous sender's
    /// share of `table`.
    fn of_table(table: &toml::Table) -> Result<Extras, String> {
        let class =
            match table.get("class") {
                None => None,
                Some(toml::Value::String(v)) => Some(Class::from_name(v).ok_or_else(|| {
                    format!("class must be \"node\" or \"network\", found \"{v}\"")
                })?),
                Some(v) => return Err(format!("class must be \"node\" or \"network\", found {v}")),
            };
        let poll = optional_number(table, "poll")?;
        let gamma = BySize::of_table(SizeParam::Gamma, table)?;
        let oc = optional_number(table, "oc")?;
        let copy = BySize::of_table(SizeParam::Copy, table)?;
        let cores = optional_number(table, "cores")?;
        let post = optional_number(table, "post")?;
        let wait = optional_number(table, "wait")?;
        let held = optional_number(table, "held")?;
        let held_reduce = optional_number(table, "held_reduce")?;
        let alloc = optional_number(table, "alloc")?;
        let alias = optional_number(table, "alias")?;
        if let Some(why) = post_invalid(post)
            .or_else(|| wait_invalid(wait))
            .or_else(|| held_invalid(held))
            .or_else(|| held_reduce_invalid(held_reduce))
            .or_else(|| alloc_invalid(alloc))
            .or_else(|| alias_invalid(alias))
            .or_else(|| oc_invalid(oc))
            .or_else(|| cores_invalid(cores))
        {
            return Err(why);
        }
        let progress_at_calls = match table.get("progress") {
            None => false,
            Some(toml::Value::String(v)) => parse_progress(v)?,
            Some(v) => {
                return Err(format!(
                    "progress must be \"async\" or \"calls\", found {v}"
                ));
            }
        };
        let rendezvous_sender = BySize::of_table(SizeParam::RendezvousSender, table)?;
        let bounce = BySize::of_table(SizeParam::Bounce, table)?;
        let bounce_clean = BySize::of_table(SizeParam::BounceClean, table)?;
        let clean = BySize::of_table(SizeParam::Clean, table)?;
        let clean_oneway = BySize::of_table(SizeParam::CleanOneway, table)?;
        let drained = BySize::of_table(SizeParam::Drained, table)?;
        let departs_upto = match table.contains_key("departs_upto") {
            true => Some(byte_count(table, "departs_upto")?),
            false => None,
        };
        Ok(Extras {
            poll,
            gamma,
            oc,
            copy,
            cores,
            class,
            progress_at_calls,
            rendezvous_sender,
            bounce,
            bounce_clean,
            clean,
            clean_oneway,
            departs_upto,
            post,
            wait,
            held,
            held_reduce,
            alloc,
            alias,
            drained,
        })
    }
}

/// A set given by `bands` (the model's §13), whose table then holds none of the paper's
/// parameters: one form or the other, never a mix whose meaning would be a guess.
fn banded_of_table(table: &toml::Table, bands: &toml::Value, x: &Extras) -> Result<Params, String> {
    let paper: Vec<&str> = NAMES[..7]
        .iter()
        .copied()
        .filter(|n| table.contains_key(*n))
        .collect();
    if !paper.is_empty() {
        return Err(format!(
            "a file holds the paper's parameters or bands, not both: remove {} or `bands`",
            paper.join(", ")
        ));
    }
    let S = byte_count(table, "S")?;
    let mut list = Bands::new(&parse_bands(bands, "bands")?)?;
    if let Some(above) = table.get("eager_bands") {
        // Eager bands measured above S (the model's §10): they begin at the file's S.
        list = list.with_eager_above(S, &parse_bands(above, "eager_bands")?)?;
    }
    let p = x.onto(Params::banded(list, S, x.poll));
    match p.invalid() {
        Some(why) => Err(format!("invalid parameters: {why}")),
        None => Ok(p),
    }
}

/// Parameter `n` of `table`, a number (an integer read as one).
fn number(table: &toml::Table, n: &str) -> Result<f64, String> {
    match table.get(n) {
        Some(toml::Value::Float(f)) => Ok(*f),
        Some(toml::Value::Integer(i)) => Ok(*i as f64),
        Some(v) => Err(format!("parameter {n} must be a number, found {v}")),
        None => Err(format!(
            "parameter {n} is missing (expected all of {})",
            NAMES.join(", ")
        )),
    }
}

/// Parameter `n` of `table` where it is there (an optional cost), a number.
fn optional_number(table: &toml::Table, n: &str) -> Result<Option<f64>, String> {
    match table.get(n) {
        None => Ok(None),
        Some(_) => Ok(Some(number(table, n)?)),
    }
}

/// Parameter `n` of `table`, a non-negative integer number of bytes.
fn byte_count(table: &toml::Table, n: &str) -> Result<u64, String> {
    match table.get(n) {
        Some(toml::Value::Integer(i)) if *i >= 0 => Ok(*i as u64),
        Some(v) => Err(format!(
            "parameter {n} must be a non-negative integer number of bytes, found {v}"
        )),
        None => Err(format!(
            "parameter {n} is missing (expected all of {})",
            NAMES.join(", ")
        )),
    }
}

/// `async` (messages move whatever the ranks do: the paper's model) or `calls` (only while the
/// receiving rank is inside an MPI call): whether progress is at calls.
pub fn parse_progress(v: &str) -> Result<bool, String> {
    match v {
        "async" => Ok(false),
        "calls" => Ok(true),
        _ => Err(format!(
            "progress must be \"async\" or \"calls\", found \"{v}\""
        )),
    }
}

/// `[[bands]]` tables (`key`): `hi` (bytes; omitted on the last) and [`BAND_NAMES`], each
/// checked; `[[eager_bands]]` have a `hi` each (the last, the larger eager limit).
fn parse_bands(v: &toml::Value, key: &str) -> Result<Vec<Band>, String> {
    let Some(list) = v.as_array() else {
        return Err(format!("`{key}` must be an array of tables ([[{key}]])"));
    };
    let (what, open_end) = match key {
        "bands" => ("band", true),
        _ => ("eager band", false),
    };
    let mut bands = Vec::with_capacity(list.len());
    for (j, t) in list.iter().enumerate() {
        let Some(t) = t.as_table() else {
            return Err(format!("{what} {} must be a table", j + 1));
        };
        let num = |n: &str| match t.get(n) {
            Some(toml::Value::Float(f)) => Ok(*f),
            Some(toml::Value::Integer(i)) => Ok(*i as f64),
            Some(v) => Err(format!("{what} {}: {n} must be a number, found {v}", j + 1)),
            None => Err(format!(
                "{what} {}: {n} is missing (expected hi and all of {}; Od and Op where split)",
                j + 1,
                BAND_NAMES[..5].join(", ")
            )),
        };
        let last = open_end && j + 1 == list.len();
        let hi = match t.get("hi") {
            None if last => u64::MAX,
            Some(toml::Value::Integer(i)) if *i >= 0 && !last => *i as u64,
            Some(_) if last => {
                return Err(format!("{what} {}: the last band has no `hi`", j + 1));
            }
            v => {
                return Err(format!(
                    "{what} {}: hi must be a non-negative integer number of bytes, found {}",
                    j + 1,
                    v.map_or("nothing".into(), |v| v.to_string())
                ));
            }
        };
        if let Some(k) = t
            .keys()
            .find(|k| *k != "hi" && !BAND_NAMES.contains(&k.as_str()))
        {
            return Err(format!(
                "{what} {}: unknown key `{k}` (expected hi, {})",
                j + 1,
                BAND_NAMES.join(", ")
            ));
        }
        // The model's §13: absent, 0.
        let split = |n: &str| match t.contains_key(n) {
            true => num(n),
            false => Ok(0.0),
        };
        bands.push(Band {
            hi,
            o: num("o")?,
            L: num("L")?,
            Os: num("Os")?,
            Or: num("Or")?,
            G: num("G")?,
            Od: split("Od")?,
            Op: split("Op")?,
            Osd: split("Osd")?,
        });
    }
    Ok(bands)
}

/// Writes parameters as the TOML [`parse_params_toml`] reads.
pub fn params_toml(p: &Params) -> String {
    let progress = match p.progress_at_calls {
        true => "progress = \"calls\"\n",
        false => "",
    };
    let poll = p.poll.map_or(String::new(), |v| format!("poll = {v:?}\n"))
        + &p.gamma.as_ref().map_or(String::new(), BySize::toml)
        + &p.oc.map_or(String::new(), |v| format!("oc = {v:?}\n"))
        + &p.copy.as_ref().map_or(String::new(), BySize::toml)
        + &p.cores
            .map_or(String::new(), |v| format!("cores = {v:?}\n"))
        + &p.class
            .map_or(String::new(), |c| format!("class = \"{}\"\n", c.name()))
        + progress
        + &p.sender_shares().map_or(String::new(), |b| b.toml())
        + &p.bounce_cost().as_ref().map_or(String::new(), BySize::toml)
        + &p.bounce_clean.as_ref().map_or(String::new(), BySize::toml)
        + &p.clean.as_ref().map_or(String::new(), BySize::toml)
        + &p.clean_oneway.as_ref().map_or(String::new(), BySize::toml)
        + &p.departs_upto
            .map_or(String::new(), |d| format!("departs_upto = {d}\n"))
        + &p.post.map_or(String::new(), |v| format!("post = {v:?}\n"))
        + &p.wait.map_or(String::new(), |v| format!("wait = {v:?}\n"))
        + &p.held.map_or(String::new(), |v| format!("held = {v:?}\n"))
        + &(p.held_reduce).map_or(String::new(), |v| format!("held_reduce = {v:?}\n"))
        + &p.alloc
            .map_or(String::new(), |v| format!("alloc = {v:?}\n"))
        + &p.alias
            .map_or(String::new(), |v| format!("alias = {v:?}\n"))
        + &p.drained.as_ref().map_or(String::new(), BySize::toml);
    if let Some(b) = &p.bands {
        let mut out = format!(
            "# LogGPS parameters in bands of message size (ns, ns/byte, bytes)\nS = {}\n{poll}",
            p.S
        );
        let above = b.eager_above().map_or(&[][..], |(_, l)| l);
        let tables = (b.as_slice().iter().map(|x| ("bands", x)))
            .chain(above.iter().map(|x| ("eager_bands", x)));
        for (key, band) in tables {
            out += &format!("\n[[{key}]]\n");
            if band.hi != u64::MAX {
                out += &format!("hi = {}\n", band.hi);
            }
            for (i, name) in b.names().iter().enumerate() {
                out += &format!("{name} = {:?}\n", band.get(i));
            }
        }
        return out;
    }
    format!(
        "# LogGPS parameters (ns, ns/byte, bytes)\n[params]\nL = {:?}\no = {:?}\nOs = {:?}\nOr = {:?}\nGs = {:?}\nGl = {:?}\ns = {}\nS = {}\n{poll}",
        p.L, p.o, p.Os, p.Or, p.Gs, p.Gl, p.s, p.S
    )
}

/// Writes several sets as one TOML file of `[[set]]` tables ([`parse_param_sets`]); one set
/// as [`params_toml`] does.
pub fn param_sets_toml(sets: &[Params]) -> String {
    if let [one] = sets {
        return params_toml(one);
    }
    let mut out =
        String::from("# LogGPS parameter sets, one per class of link (ns, ns/byte, bytes)\n");
    for p in sets {
        out += "\n[[set]]\n";
        for line in params_toml(p).lines() {
            match line {
                "[params]" => {}
                "[[bands]]" => out += "[[set.bands]]\n",
                "[[eager_bands]]" => out += "[[set.eager_bands]]\n",
                l if l.starts_with("# LogGPS") => {}
                l => {
                    out += l;
                    out.push('\n');
                }
            }
        }
    }
    out
}
