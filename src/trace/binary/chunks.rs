//! The metadata chunks of the binary encoding: the job (`J`: library, eager limit, parameter
//! sets), a rank (`R`), its call sites (`S`) and loaded objects (`M`), a communicator (`C`);
//! their parsers and, for the parameter sets, their writers.

use super::*;

#[allow(non_snake_case)] // the paper's names
pub(super) fn params(input: &[u8]) -> Res<'_, Params> {
    let (input, (L, o, Os, Or, Gs, Gl, s, S)) = tuple((
        le_f64, le_f64, le_f64, le_f64, le_f64, le_f64, le_u64, le_u64,
    ))(input)?;
    Ok((input, Params::paper([L, o, Os, Or, Gs, Gl], s, S)))
}

/// Flag 3's parameters: `u8 n`, `n × (u64 hi, 5 × f64 o L Os Or G)`, `u64 S`, then the
/// [`extras`]; flag 5's (`split` 2) with `2 × f64 Od Op` after each band's `G` (the model's
/// §13), flag 7's (`split` 3) with `3 × f64 Od Op Osd`; flag 6's (`above`) as flag 5's (8's as
/// 7's) with, after the bands, `u64 lo`, `u8 m` and `m` bands as those: the eager bands above
/// the measured limit `lo` (the model's §10).
pub(super) fn banded(input: &[u8], split: usize, above: bool) -> Res<'_, Params> {
    let (input, list) = band_list(input, split)?;
    let bands = match Bands::new(&list) {
        Ok(b) => b,
        Err(why) => return fail(input, format!("valid bands ({why})")),
    };
    let (input, bands) = match above {
        false => (input, bands),
        true => {
            let (input, lo) = le_u64(input)?;
            let (input, list) = band_list(input, split)?;
            match bands.with_eager_above(lo, &list) {
                Ok(b) => (input, b),
                Err(why) => return fail(input, format!("valid eager bands above S ({why})")),
            }
        }
    };
    let (input, s) = le_u64(input)?;
    let (input, x) = extras(input)?;
    let poll = x.poll;
    Ok((input, x.on(Params::banded(bands, s, poll))))
}

/// `u8 n` and `n` bands, each `u64 hi`, `5 × f64 o L Os Or G` and `split` more of `Od Op Osd`
/// (0, 2 or 3).
fn band_list(input: &[u8], split: usize) -> Res<'_, Vec<Band>> {
    let (mut input, n) = le_u8(input)?;
    let mut list = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (rest, hi) = le_u64(input)?;
        let (rest, v) = nom::multi::count(le_f64, 5 + split)(rest)?;
        let mut band = Band {
            hi,
            ..Band::default()
        };
        for (i, x) in v.into_iter().enumerate() {
            *band.get_mut(i) = x;
        }
        list.push(band);
        input = rest;
    }
    Ok((input, list))
}

/// The optional parameters: a `u8` of bits (1: `poll` follows, 2: `gamma` follows, 4:
/// progress only inside MPI calls, 8: `oc` follows, 16: `cores` follows, 32: `copy` follows,
/// 64: `rendezvous_sender` follows, 128: `bounce` follows), then each value that is there as an
/// `f64`, in the order `poll`, `gamma`, `oc`, `cores`, `copy`, `rendezvous_sender`, `bounce`.
pub(super) fn extras(input: &[u8]) -> Res<'_, Extras> {
    let (input, bits) = le_u8(input)?;
    let (input, poll) = cond(bits & 1 != 0, le_f64)(input)?;
    let at = input;
    let (input, gamma) = cond(bits & 2 != 0, le_f64)(input)?;
    let gamma = match gamma.map(|v| BySize::one(SizeParam::Gamma, v)).transpose() {
        Ok(g) => g,
        Err(why) => return fail(at, why),
    };
    let (input, oc) = cond(bits & 8 != 0, le_f64)(input)?;
    let (input, cores) = cond(bits & 16 != 0, le_f64)(input)?;
    let at = input;
    let (input, copy) = cond(bits & 32 != 0, le_f64)(input)?;
    let copy = match copy.map(|v| BySize::one(SizeParam::Copy, v)).transpose() {
        Ok(c) => c,
        Err(why) => return fail(at, why),
    };
    let at = input;
    let (input, rendezvous_sender) = cond(bits & 64 != 0, le_f64)(input)?;
    let rendezvous_sender = match (rendezvous_sender)
        .map(|v| BySize::one(SizeParam::RendezvousSender, v))
        .transpose()
    {
        Ok(f) => f,
        Err(why) => return fail(at, why),
    };
    let at = input;
    let (input, bounce) = cond(bits & 128 != 0, le_f64)(input)?;
    let bounce = match bounce
        .map(|v| BySize::one(SizeParam::Bounce, v))
        .transpose()
    {
        Ok(b) => b,
        Err(why) => return fail(at, why),
    };
    let extras = Extras {
        poll,
        gamma,
        oc,
        cores,
        copy,
        progress_at_calls: bits & 4 != 0,
        rendezvous_sender,
        bounce,
    };
    Ok((input, extras))
}

/// The optional parameters of a set, as [`extras`] reads them.
pub(super) struct Extras {
    pub(super) poll: Option<f64>,
    pub(super) gamma: Option<BySize>,
    pub(super) oc: Option<f64>,
    pub(super) cores: Option<f64>,
    pub(super) copy: Option<BySize>,
    pub(super) progress_at_calls: bool,
    pub(super) rendezvous_sender: Option<BySize>,
    pub(super) bounce: Option<BySize>,
}

impl Extras {
    /// `p` with these.
    pub(super) fn on(self, p: Params) -> Params {
        Params {
            poll: self.poll,
            gamma: self.gamma,
            oc: self.oc,
            cores: self.cores,
            copy: self.copy,
            progress_at_calls: self.progress_at_calls,
            rendezvous_sender: self.rendezvous_sender,
            bounce: self.bounce,
            ..p
        }
    }
}

/// A value by size where it is one value for every size (one point at 0 bytes): the extras'.
fn one(b: Option<BySize>) -> Option<f64> {
    match b?.points() {
        &[(0, v)] => Some(v),
        _ => None,
    }
}

/// A set's `bounce` where it is one value for every size, not 0: the extras'.
pub(super) fn one_bounce(p: &Params) -> Option<f64> {
    one(p.bounce_cost())
}

/// A set's `copy` and `gamma` where each is one value for every size: the extras'.
pub(super) fn one_copy_gamma(p: &Params) -> (Option<f64>, Option<f64>) {
    (one(p.copy), one(p.gamma))
}

/// A set's `rendezvous_sender` where it is one value for every size, not 0: the extras'.
pub(super) fn one_sender(p: &Params) -> Option<f64> {
    one(p.sender_shares())
}

/// A set's `copy`, `gamma` or `rendezvous_sender` (`param`) where it is at sizes: written after
/// the sets, at its sizes ([`each_by_size`]).
pub(super) fn at_sizes(p: &Params, param: SizeParam) -> Option<BySize> {
    let b = match param {
        SizeParam::Copy => p.copy,
        SizeParam::Gamma => p.gamma,
        SizeParam::RendezvousSender => p.sender_shares(),
        _ => None,
    };
    b.filter(|b| one(Some(*b)).is_none())
}

/// A set's `bounce` where it costs anything and is not [`one_bounce`]: written after the sets,
/// at its sizes ([`each_by_size`]).
pub(super) fn bounce_at_sizes(p: &Params) -> Option<BySize> {
    p.bounce_cost().filter(|_| one_bounce(p).is_none())
}

/// Writes the [`extras`] of `p`.
pub(super) fn put_extras(j: &mut Vec<u8>, p: &Params) {
    let progress = (p.progress_at_calls as u8) << 2;
    let oc = (p.oc.is_some() as u8) << 3 | (p.cores.is_some() as u8) << 4;
    let sender = one_sender(p);
    let bounce = one_bounce(p);
    let (copy_one, gamma_one) = one_copy_gamma(p);
    let copy = (copy_one.is_some() as u8) << 5
        | (sender.is_some() as u8) << 6
        | (bounce.is_some() as u8) << 7;
    j.push(p.poll.is_some() as u8 | (gamma_one.is_some() as u8) << 1 | progress | oc | copy);
    for v in [p.poll, gamma_one, p.oc, p.cores, copy_one, sender, bounce]
        .into_iter()
        .flatten()
    {
        j.extend_from_slice(&v.to_le_bytes());
    }
}

/// The job's library, eager limit, main parameter set and other sets.
pub(super) type Job = (String, Option<EagerLimit>, Option<Params>, Vec<Params>);

pub(super) fn job(input: &[u8]) -> Res<'_, Job> {
    let (input, library) = expect("the MPI library string", string)(input)?;
    let (input, has_eager) = expect("the eager-limit flag (0 or 1)", le_u8)(input)?;
    let (input, eager_limit) = match has_eager {
        0 => (input, None),
        1 => {
            let (input, name) = expect("the eager limit's name", string)(input)?;
            let (input, bytes) = expect("the eager limit in bytes (u64)", le_u64)(input)?;
            (input, Some(EagerLimit { name, bytes }))
        }
        v => return fail(input, format!("the eager-limit flag 0 or 1, found {v}")),
    };
    let (input, params) = set(input)?;
    // Where sets carry a class or several combine (the model's §12): the main set's class,
    // then the other sets, each with its class.
    if input.is_empty() {
        return Ok((input, (library, eager_limit, params, Vec::new())));
    }
    let Some(main) = params else {
        return fail(input, "nothing after a job without parameters");
    };
    let (input, main_class) = expect("the parameter set's class (0 to 2)", class)(input)?;
    let (mut input, n) = expect("the number of other parameter sets", le_u8)(input)?;
    let mut others = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (rest, c) = expect("a parameter set's class (0 to 2)", class)(input)?;
        let (rest, p) = set(rest)?;
        let Some(p) = p else {
            return fail(rest, "another parameter set (flag 1 to 5)");
        };
        others.push(Params { class: c, ..p });
        input = rest;
    }
    let mut main = Params {
        class: main_class,
        ..main
    };
    // Each set's `departs_upto` (u64::MAX: none), where one has it (the model's §13).
    if !input.is_empty() {
        for p in std::iter::once(&mut main).chain(others.iter_mut()) {
            let (rest, d) = expect("a parameter set's departs_upto (u64)", le_u64)(input)?;
            (p.departs_upto, input) = ((d != u64::MAX).then_some(d), rest);
        }
    }
    // Then each set's `post` (NaN: none), where one has it (the model's §4).
    (input, ()) = each_value(input, &mut main, &mut others, POST)?;
    // Then each set's `clean`, where one has it (the model's §13): its number of sizes (0:
    // none), each size and its share.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::Clean)?;
    // Then each set's `held` (NaN: none), where one has it (the model's §15).
    (input, ()) = each_value(input, &mut main, &mut others, HELD)?;
    // Then each set's `bounce` by size, where one has it at sizes (the model's §13; one value
    // for every size is the extras'): as the `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::Bounce)?;
    // Then each set's `clean_oneway`, where one has it: as the `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::CleanOneway)?;
    // Then each set's `copy` and `gamma` by size, where one has either at sizes (one value
    // for every size is the extras'): as the `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::Copy)?;
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::Gamma)?;
    // Then each set's `held_reduce` (NaN: none), where one has it (the model's §15).
    (input, ()) = each_value(input, &mut main, &mut others, HELD_REDUCE)?;
    // Then each set's `alloc` (NaN: none), where one has it (the model's §15).
    (input, ()) = each_value(input, &mut main, &mut others, ALLOC)?;
    // Then each set's `alias` (NaN: none), where one has it (the model's §9).
    (input, ()) = each_value(input, &mut main, &mut others, ALIAS)?;
    // Then each set's `drained` at sizes, where one has it: as the `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::Drained)?;
    // Then each set's `wait` (NaN: none), where one has it (the model's §4).
    (input, ()) = each_value(input, &mut main, &mut others, WAIT)?;
    // Then each set's `bounce_clean` at sizes, where one has it (the model's §13): as the
    // `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::BounceClean)?;
    // Then each set's `rendezvous_sender` at sizes, where one has it so (the model's §14; one
    // value for every size is the extras'): as the `clean`s.
    (input, ()) = each_by_size(input, &mut main, &mut others, SizeParam::RendezvousSender)?;
    Ok((input, (library, eager_limit, Some(main), others)))
}

/// Where `input` holds more: for each of `main` and `others` in turn, its `param` at sizes:
/// their number `n` (u8; 0: the set's own kept), then each size (u64) and value (f64).
fn each_by_size<'a>(
    mut input: &'a [u8],
    main: &mut Params,
    others: &mut [Params],
    param: SizeParam,
) -> Res<'a, ()> {
    if input.is_empty() {
        return Ok((input, ()));
    }
    let (count, size, value) = match param {
        SizeParam::Clean => (
            "a parameter set's number of clean sizes (u8)",
            "a clean size in bytes (u64)",
            "a clean share (f64)",
        ),
        SizeParam::Bounce => (
            "a parameter set's number of bounce sizes (u8)",
            "a bounce size in bytes (u64)",
            "a bounce in ns a byte (f64)",
        ),
        SizeParam::BounceClean => (
            "a parameter set's number of bounce_clean sizes (u8)",
            "a bounce_clean size in bytes (u64)",
            "a bounce_clean in ns a byte (f64)",
        ),
        SizeParam::CleanOneway => (
            "a parameter set's number of clean_oneway sizes (u8)",
            "a clean_oneway size in bytes (u64)",
            "a clean_oneway share (f64)",
        ),
        SizeParam::Copy => (
            "a parameter set's number of copy sizes (u8)",
            "a copy size in bytes (u64)",
            "a copy in ns a byte (f64)",
        ),
        SizeParam::Gamma => (
            "a parameter set's number of gamma sizes (u8)",
            "a gamma size in bytes (u64)",
            "a gamma in ns a byte (f64)",
        ),
        SizeParam::Drained => (
            "a parameter set's number of drained sizes (u8)",
            "a drained size in bytes (u64)",
            "a drained receive in ns (f64)",
        ),
        SizeParam::RendezvousSender => (
            "a parameter set's number of rendezvous_sender sizes (u8)",
            "a rendezvous_sender size in bytes (u64)",
            "a rendezvous_sender share (f64)",
        ),
    };
    for p in std::iter::once(main).chain(others.iter_mut()) {
        let at = input;
        let (rest, n) = expect(count, le_u8)(input)?;
        let mut points = Vec::new();
        input = rest;
        for _ in 0..n {
            let (rest, k) = expect(size, le_u64)(input)?;
            let (rest, f) = expect(value, le_f64)(rest)?;
            points.push((k, f));
            input = rest;
        }
        if n > 0 {
            let b = match BySize::new(param, &points) {
                Ok(b) => b,
                Err(why) => return fail(at, why),
            };
            *match param {
                SizeParam::Clean => &mut p.clean,
                SizeParam::Bounce => &mut p.bounce,
                SizeParam::BounceClean => &mut p.bounce_clean,
                SizeParam::CleanOneway => &mut p.clean_oneway,
                SizeParam::Copy => &mut p.copy,
                SizeParam::Gamma => &mut p.gamma,
                SizeParam::Drained => &mut p.drained,
                SizeParam::RendezvousSender => &mut p.rendezvous_sender,
            } = Some(b);
        }
    }
    Ok((input, ()))
}

/// A set's optional value after the sets: what it is, where a set keeps it, why it is wrong.
type Value = (
    &'static str,
    fn(&mut Params) -> &mut Option<f64>,
    fn(Option<f64>) -> Option<String>,
);

const POST: Value = (
    "a parameter set's post (f64)",
    |p| &mut p.post,
    crate::model::post_invalid,
);

const WAIT: Value = (
    "a parameter set's wait (f64)",
    |p| &mut p.wait,
    crate::model::wait_invalid,
);

const HELD: Value = (
    "a parameter set's held (f64)",
    |p| &mut p.held,
    crate::model::held_invalid,
);

const HELD_REDUCE: Value = (
    "a parameter set's held_reduce (f64)",
    |p| &mut p.held_reduce,
    crate::model::held_reduce_invalid,
);

const ALLOC: Value = (
    "a parameter set's alloc (f64)",
    |p| &mut p.alloc,
    crate::model::alloc_invalid,
);

const ALIAS: Value = (
    "a parameter set's alias (f64)",
    |p| &mut p.alias,
    crate::model::alias_invalid,
);

/// Where `input` holds more: an `f64` for each of `main` and `others` in turn (NaN: none), put
/// where `value` says, checked by it.
fn each_value<'a>(
    mut input: &'a [u8],
    main: &mut Params,
    others: &mut [Params],
    (what, field, invalid): Value,
) -> Res<'a, ()> {
    if input.is_empty() {
        return Ok((input, ()));
    }
    for p in std::iter::once(main).chain(others.iter_mut()) {
        let (rest, v) = expect(what, le_f64)(input)?;
        let value = (!v.is_nan()).then_some(v);
        if let Some(why) = invalid(value) {
            return fail(input, why);
        }
        (*field(p), input) = (value, rest);
    }
    Ok((input, ()))
}

/// A parameter set's class: 0 none, 1 `node`, 2 `network`.
pub(super) fn class(input: &[u8]) -> Res<'_, Option<Class>> {
    let (input, c) = le_u8(input)?;
    match c {
        0 => Ok((input, None)),
        1 => Ok((input, Some(Class::Node))),
        2 => Ok((input, Some(Class::Network))),
        v => fail(input, format!("a class 0 to 2, found {v}")),
    }
}

/// A parameter set after its flag (0: none).
pub(super) fn set(input: &[u8]) -> Res<'_, Option<Params>> {
    let (input, has_params) = expect("the parameters flag (0 to 8)", le_u8)(input)?;
    let (input, params) = match has_params {
        0 => (input, None),
        1 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            (input, Some(p))
        }
        2 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            let (input, poll) = expect("the cost of a failed poll (f64)", le_f64)(input)?;
            let poll = Some(poll);
            (input, Some(Params { poll, ..p }))
        }
        3 => expect("LogGPS parameters in bands", |i| banded(i, 0, false))(input)
            .map(|(i, p)| (i, Some(p)))?,
        5 => expect("LogGPS parameters in bands with Od and Op", |i| {
            banded(i, 2, false)
        })(input)
        .map(|(i, p)| (i, Some(p)))?,
        6 => expect(
            "LogGPS parameters in bands with Od, Op and eager bands above S",
            |i| banded(i, 2, true),
        )(input)
        .map(|(i, p)| (i, Some(p)))?,
        7 => expect("LogGPS parameters in bands with Od, Op and Osd", |i| {
            banded(i, 3, false)
        })(input)
        .map(|(i, p)| (i, Some(p)))?,
        8 => expect(
            "LogGPS parameters in bands with Od, Op, Osd and eager bands above S",
            |i| banded(i, 3, true),
        )(input)
        .map(|(i, p)| (i, Some(p)))?,
        4 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            let (input, x) = expect("the optional parameters", extras)(input)?;
            (input, Some(x.on(p)))
        }
        v => return fail(input, format!("the parameters flag 0 to 8, found {v}")),
    };
    Ok((input, params))
}

/// [`class`]'s code of `c`.
pub(super) fn class_code(c: Option<Class>) -> u8 {
    match c {
        None => 0,
        Some(Class::Node) => 1,
        Some(Class::Network) => 2,
    }
}

/// Writes for `main` and each of `others`, as [`each_by_size`] reads them, the points of
/// `of(set)`: their number (0: none), each size and value.
pub(super) fn put_by_size(
    j: &mut Vec<u8>,
    main: &Params,
    others: &[Params],
    of: impl Fn(&Params) -> Option<BySize>,
) {
    for q in std::iter::once(main).chain(others) {
        let b = of(q);
        let points = b.as_ref().map_or(&[][..], |b| b.points());
        j.push(points.len() as u8);
        for (k, f) in points {
            j.extend_from_slice(&k.to_le_bytes());
            j.extend_from_slice(&f.to_le_bytes());
        }
    }
}

/// Writes a parameter set as [`set`] reads it: its flag, then its fields (0 alone: none).
pub(super) fn put_set(j: &mut Vec<u8>, params: Option<&Params>) {
    match params {
        Some(p) if let Some(b) = &p.bands => {
            // 3: bands, 5: bands with Od and Op (written only where a band has them), 6: and
            // eager bands above S (only where the set has them), every band with Od and Op;
            // 7 and 8 as 5 and 6 with Osd too (only where a band has it).
            let above = b.eager_above();
            j.push(match (above, b.grows_od(), b.split()) {
                (Some(_), true, _) => 8,
                (Some(_), false, _) => 6,
                (None, true, _) => 7,
                (None, false, true) => 5,
                (None, false, false) => 3,
            });
            let names = match (above, b.grows_od()) {
                (Some(_), false) => crate::model::BAND_NAMES.len() - 1,
                _ => b.names().len(),
            };
            let put = |j: &mut Vec<u8>, list: &[Band]| {
                j.push(list.len() as u8);
                for band in list {
                    j.extend_from_slice(&band.hi.to_le_bytes());
                    for i in 0..names {
                        j.extend_from_slice(&band.get(i).to_le_bytes());
                    }
                }
            };
            put(j, b.as_slice());
            if let Some((lo, list)) = above {
                j.extend_from_slice(&lo.to_le_bytes());
                put(j, list);
            }
            j.extend_from_slice(&p.S.to_le_bytes());
            put_extras(j, p);
        }
        Some(p) => {
            // 1: the eight parameters, 2: and the cost of a failed poll (as earlier writers
            // did), 4: and the optional parameters with their bits.
            let extras = one_copy_gamma(p) != (None, None)
                || p.oc.is_some()
                || p.cores.is_some()
                || p.progress_at_calls
                || one_sender(p).is_some()
                || one_bounce(p).is_some();
            j.push(match (p.poll, extras) {
                (_, true) => 4,
                (Some(_), false) => 2,
                (None, false) => 1,
            });
            for v in [p.L, p.o, p.Os, p.Or, p.Gs, p.Gl] {
                j.extend_from_slice(&v.to_le_bytes());
            }
            j.extend_from_slice(&p.s.to_le_bytes());
            j.extend_from_slice(&p.S.to_le_bytes());
            match extras {
                true => put_extras(j, p),
                false => j.extend(p.poll.iter().flat_map(|v| v.to_le_bytes())),
            }
        }
        None => j.push(0),
    }
}

/// An `R` chunk of rank `rank` of `nranks`.
pub(super) fn rank_meta(input: &[u8], rank: u32, nranks: usize) -> Res<'_, RankMeta> {
    let (input, hostname) = expect("the hostname", string)(input)?;
    let (input, clock_offset_init_ns) = expect("the clock offset at Init (i64)", le_i64)(input)?;
    let (input, clock_offset_final_ns) =
        expect("the clock offset at Finalize (i64)", le_i64)(input)?;
    // After the offsets: the cores' figures (20 bytes), the tracer's own time (8), its time
    // inside a call (8 more) and the same two for requests' records (16 more), any of them or
    // none; after all four the node's CPUs (8 more), then the routines sampled (4 + 13 each,
    // at least one: never 20 bytes apart from a length without the cores).
    let n = input.len();
    let with_cores = [20, 28, 36, 52, 60].contains(&n) || (n >= 64 + 13 && (n - 64) % 13 == 0);
    let (input, cores) = if !with_cores {
        (input, None)
    } else {
        let (input, partner) = expect("the cores' partner rank (u32)", le_u32)(input)?;
        let (input, init_ns) = expect("the cores' round trip at Init (f64)", le_f64)(input)?;
        let (input, final_ns) = expect("the cores' round trip at Finalize (f64)", le_f64)(input)?;
        let c = Cores {
            partner,
            init_ns,
            final_ns,
        };
        if let Some(why) = c.invalid(rank, nranks) {
            return fail(input, why);
        }
        (input, Some(c))
    };
    let mut tracer = [None; 4];
    let mut input = input;
    for (i, (what, name)) in [
        (OWN, "the tracer's own time per record (f64)"),
        (IN_CALL, "the tracer's time inside a call (f64)"),
        (OWN, "the tracer's own time per record of a request (f64)"),
        (
            IN_CALL,
            "the tracer's time inside a call of a request (f64)",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        if input.is_empty() {
            break;
        }
        let (rest, ns) = expect(name, le_f64)(input)?;
        if let Some(why) = own_invalid(what, ns) {
            return fail(rest, why);
        }
        (input, tracer[i]) = (rest, Some(ns));
    }
    let [own_ns, in_call_ns, own_req, in_call_req] = tracer;
    let own_req_ns = own_req.zip(in_call_req).map(|(o, c)| [o, c]);
    if own_req.is_some() && own_req_ns.is_none() {
        return fail(input, "the tracer's time inside a call of a request (f64)");
    }
    let (input, cpus) = match own_req_ns.is_some() && !input.is_empty() {
        true => {
            let (rest, n) = expect("the node's CPUs (u64)", le_u64)(input)?;
            if !(1..=crate::trace::MAX_CPUS as u64).contains(&n) {
                return fail(input, "the node's CPUs, from 1 to 2^20 (u64)");
            }
            (rest, Some(n as u32))
        }
        false => (input, None),
    };
    let (input, own_sampled) = match cpus.is_some() && !input.is_empty() {
        true => own_sampled(input)?,
        false => (input, OwnSampled::NONE),
    };
    Ok((
        input,
        RankMeta {
            hostname,
            clock_offset_init_ns,
            clock_offset_final_ns,
            cores,
            placement: None,
            own_ns,
            in_call_ns,
            own_req_ns,
            cpus,
            own_sampled,
        },
    ))
}

/// The tail of an `R` chunk after the node's CPUs: the tracer's own time of each routine
/// sampled during the run (its count, then per routine its code, samples and ns).
fn own_sampled(input: &[u8]) -> Res<'_, OwnSampled> {
    let (mut input, n) = count_u32(
        "the number of routines sampled (u32)",
        "routines sampled",
        13,
    )(input)?;
    let mut each = Vec::with_capacity(n);
    for _ in 0..n {
        let (rest, code) = expect("a sampled routine's code (u8)", le_u8)(input)?;
        let Some(routine) = Routine::from_code(code) else {
            return fail(input, format!("a routine's code, found {code}"));
        };
        let (rest, samples) = expect("its samples (u32)", le_u32)(rest)?;
        let (rest, ns) = expect("its own time per record (f64)", le_f64)(rest)?;
        each.push((routine, samples, ns));
        input = rest;
    }
    match OwnSampled::new(each) {
        Ok(s) => Ok((input, s)),
        Err(why) => fail(input, why),
    }
}

/// An `S` chunk: the addresses it adds to its rank's site table, and the site of each of the
/// rank's next records (its index in the table, [`UNKNOWN`] for none: 0 in the file, else the
/// index + 1).
pub(super) fn site_chunk(input: &[u8]) -> Res<'_, (Vec<u64>, Vec<u32>)> {
    let (rest, n) = count_u32("the number of new addresses (u32)", "addresses", 8)(input)?;
    let (rest, addresses) = nom::multi::count(le_u64, n)(rest)?;
    let (mut rest, m) = count_u32("the number of records (u32)", "site indices", 1)(rest)?;
    let mut indices = Vec::with_capacity(m);
    for _ in 0..m {
        let (r, i) = u32_field("a site index")(rest)?;
        indices.push(i.wrapping_sub(1));
        rest = r;
    }
    Ok((rest, (addresses, indices)))
}

/// An `M` chunk: the rank's loaded objects.
pub(super) fn objects_chunk(input: &[u8]) -> Res<'_, Vec<Object>> {
    const MIN_OBJECT_BYTES: usize = 3 * 8 + 2;
    let (mut rest, n) =
        count_u32("the number of objects (u32)", "objects", MIN_OBJECT_BYTES)(input)?;
    let mut objects = Vec::with_capacity(n);
    for _ in 0..n {
        let (r, (bias, lo, hi)) = expect(
            "an object's bias and address range (3 × u64)",
            tuple((le_u64, le_u64, le_u64)),
        )(rest)?;
        let (r, build_id) = expect("the object's build id", string)(r)?;
        let (r, path) = expect("the object's path", string)(r)?;
        objects.push(Object {
            bias,
            lo,
            hi,
            build_id,
            path,
        });
        rest = r;
    }
    Ok((rest, objects))
}

/// An `N` chunk: the names of the rank's sites, one for each entry of its site table.
pub(super) fn named_chunk(input: &[u8]) -> Res<'_, Vec<Named>> {
    // Two string lengths and a line, one byte each at least.
    const MIN_NAME_BYTES: usize = 3;
    let (mut rest, n) = count_u32(
        "the number of named sites (u32)",
        "named sites",
        MIN_NAME_BYTES,
    )(input)?;
    let mut named = Vec::with_capacity(n);
    for _ in 0..n {
        let (r, function) = expect("a site's function", string)(rest)?;
        let (r, file) = expect("the site's file", string)(r)?;
        let (r, line) = u32_field("the site's line")(r)?;
        named.push(Named {
            function,
            file,
            line,
        });
        rest = r;
    }
    Ok((rest, named))
}

pub(super) fn comm(input: &[u8]) -> Res<'_, Comm> {
    let (rest, id) = expect("the communicator id (u32)", le_u32)(input)?;
    if id == 0 {
        return fail(input, "a communicator id ≥ 1 (0 is MPI_COMM_WORLD)");
    }
    let (rest, n) = expect("the communicator size (u32)", le_u32)(rest)?;
    if n == 0 || n as usize > rest.len() / 4 {
        return fail(
            rest,
            format!(
                "a communicator size from 1 to {} (what the chunk holds), found {n}",
                rest.len() / 4
            ),
        );
    }
    let mut members = Vec::with_capacity(n as usize);
    let mut rest = rest;
    for _ in 0..n {
        let (r, m) = le_u32(rest)?;
        members.push(m);
        rest = r;
    }
    Ok((rest, Comm { id, members }))
}
