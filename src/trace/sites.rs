//! Call sites: where in the program each call was made (tracer/FORMAT.md, the `S` and `M`
//! chunks). The addresses are each rank's own, since every process loads its objects where it
//! may: [`Sites::locate`] turns one into an object and an address in that object's file, which
//! is the same for every rank that ran the same code. Traces of other tools name their sites
//! themselves (function, file and line: [`Named`]), with no address to look up.

/// The site index of an event whose site was not recorded.
pub const UNKNOWN: u32 = u32::MAX;

/// A loaded object (the program, a shared library) of one rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object {
    /// What the loader added to the file's addresses.
    pub bias: u64,
    /// The addresses its loaded segments span, `lo..hi`.
    pub lo: u64,
    pub hi: u64,
    /// Its GNU build id, in hex ("" if it has none).
    pub build_id: String,
    pub path: String,
}

/// The call sites of a trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sites {
    /// Rank `r`'s loaded objects.
    pub objects: Vec<Vec<Object>>,
    /// Rank `r`'s site table: the return addresses of its calls, in order of first use.
    pub addresses: Vec<Vec<u64>>,
    /// Each event's index in its rank's table (events numbered across ranks as
    /// [`super::Events`] does), or [`UNKNOWN`].
    pub of_event: Vec<u32>,
    /// Rank `r`'s sites as the trace names them, one for each entry of its table (its
    /// addresses then mean nothing); empty where they are addresses in its objects.
    pub named: Vec<Vec<Named>>,
}

/// A call site as a trace names it: the function the call was made in, its file and line
/// (empty, 0: not recorded).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Named {
    pub function: String,
    pub file: String,
    pub line: u32,
}

impl Sites {
    /// The sites of ranks `own` alone, whose events start at `offsets` (before
    /// [`super::Events::keep`]).
    pub fn keep(&mut self, own: std::ops::Range<usize>, offsets: &[usize]) {
        self.of_event.truncate(offsets[own.end]);
        self.of_event.drain(..offsets[own.start]);
        for r in (0..self.addresses.len()).filter(|r| !own.contains(r)) {
            self.addresses[r] = Vec::new();
            self.objects[r] = Vec::new();
            self.named[r] = Vec::new();
        }
    }
}

/// Where a return address lies: in `objects[rank][object]`, at `file_address` of its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub object: usize,
    /// The address inside the call instruction (the return address less one), as the file
    /// numbers it.
    pub file_address: u64,
}

impl Sites {
    /// Sites of `nranks` ranks and `events` events, none known.
    pub fn unknown(nranks: usize, events: usize) -> Sites {
        Sites {
            objects: vec![Vec::new(); nranks],
            addresses: vec![Vec::new(); nranks],
            of_event: vec![UNKNOWN; events],
            named: vec![Vec::new(); nranks],
        }
    }

    /// Rank `r`'s site `i` as the trace names it, where it names its sites.
    pub fn named(&self, r: usize, i: usize) -> Option<&Named> {
        self.named.get(r)?.get(i)
    }

    /// Where a rank's named sites do not number its site table: the first such rank, its
    /// names and its table's length.
    pub fn misnamed(&self) -> Option<(usize, usize, usize)> {
        (0..self.named.len())
            .map(|r| (r, self.named[r].len(), self.addresses[r].len()))
            .find(|&(_, n, a)| n > 0 && n != a)
    }

    /// The return address of event `e` (numbered across ranks) of rank `r`, if recorded.
    pub fn address(&self, r: usize, e: usize) -> Option<u64> {
        let i = *self.of_event.get(e)?;
        self.addresses[r].get(i as usize).copied()
    }

    /// The object of rank `r` that holds return address `a`, and the call's address in its
    /// file.
    pub fn locate(&self, r: usize, a: u64) -> Option<Located> {
        let at = a.checked_sub(1)?;
        let object = self.objects[r]
            .iter()
            .position(|o| (o.lo..o.hi).contains(&at))?;
        Some(Located {
            object,
            file_address: at.checked_sub(self.objects[r][object].bias)?,
        })
    }

    /// Whether any event has a site.
    pub fn any(&self) -> bool {
        self.of_event.iter().any(|&i| i != UNKNOWN)
    }
}
