//! The OTF2 library (Score-P's trace format), opened when a trace asks for it: `dlopen` of
//! `libotf2.so` or Debian's `libopen-trace-format2.so.10` (`LOGGPS_OTF2_LIB` names another), so
//! that the program builds and runs without it. Its reader hands each record to a callback;
//! here each callback only copies the record's fields into [`Defs`] or a location's [`Ev`]s,
//! which the safe reader (`super`) turns into calls. Signatures from OTF2 3.0's headers
//! (`OTF2_GlobalDefReaderCallbacks.h`, `OTF2_EvtReaderCallbacks.h`, `OTF2_Reader.h`).

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

/// One event of a location, with the fields the reader uses (ranks are the communicator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ev {
    Enter(u32),
    Leave(u32),
    /// A calling context's region entered and left (Score-P with unwinding).
    ContextEnter(u32),
    ContextLeave(u32),
    Send {
        to: u32,
        comm: u32,
        tag: u32,
        len: u64,
    },
    Isend {
        to: u32,
        comm: u32,
        tag: u32,
        len: u64,
        req: u64,
    },
    IsendComplete(u64),
    IrecvRequest(u64),
    Recv {
        from: u32,
        comm: u32,
        tag: u32,
        len: u64,
    },
    Irecv {
        from: u32,
        comm: u32,
        tag: u32,
        len: u64,
        req: u64,
    },
    CollEnd {
        op: u8,
        comm: u32,
        root: u32,
        sent: u64,
        got: u64,
    },
    Cancelled(u64),
    /// A nonblocking collective's request, and its completion.
    NbcRequest(u64),
    NbcComplete {
        comm: u32,
        root: u32,
        sent: u64,
        got: u64,
        req: u64,
    },
}

/// The global definitions the reader uses, by their OTF2 ids.
#[derive(Clone, Default, Debug)]
pub(super) struct Defs {
    pub strings: HashMap<u32, String>,
    /// Region → its name's string, role, paradigm, source file's string and first line.
    pub regions: HashMap<u32, RegionDef>,
    /// Location → (name, type, its location group), in definition order.
    pub locations: Vec<(u64, u32, u8, u32)>,
    /// Location group → (name, type, parent system tree node).
    pub groups_of_locations: HashMap<u32, (u32, u8, u32)>,
    /// System tree node → (name, class, parent).
    pub nodes: HashMap<u32, (u32, u32, u32)>,
    /// Communicator → (name, group, parent), in definition order.
    pub comms: Vec<(u32, u32, u32, u32)>,
    /// Group → (type, paradigm, members).
    pub groups: HashMap<u32, (u8, u8, Vec<u64>)>,
    /// Ticks a second, the first tick.
    pub clock: Option<(u64, u64)>,
    /// Calling context → (region, source code location, parent context).
    pub contexts: HashMap<u32, (u32, u32, u32)>,
    /// Source code location → (file's string, line).
    pub locations_in_code: HashMap<u32, (u32, u32)>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct RegionDef {
    pub name: u32,
    pub role: u8,
    pub paradigm: u8,
    pub file: u32,
    pub begin: u32,
}

impl Defs {
    pub fn string(&self, id: u32) -> &str {
        self.strings.get(&id).map_or("", String::as_str)
    }
}

type Reader = c_void;
type Code = c_int;
type Cb = *const c_void;

macro_rules! library {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        #[allow(non_snake_case)]
        struct Lib { $($name: unsafe extern "C" fn($($arg),*) -> $ret,)* }

        impl Lib {
            /// The library's functions, each found by name in `handle`.
            unsafe fn find(handle: *mut c_void) -> Result<Lib, String> {
                Ok(Lib { $($name: {
                    let sym = concat!(stringify!($name), "\0");
                    let p = unsafe { libc::dlsym(handle, sym.as_ptr().cast()) };
                    if p.is_null() {
                        return Err(format!("the OTF2 library has no {}", stringify!($name)));
                    }
                    unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(p) }
                },)* })
            }
        }
    };
}

library! {
    OTF2_Reader_Open: fn(*const c_char) -> *mut Reader;
    OTF2_Reader_Close: fn(*mut Reader) -> Code;
    OTF2_Reader_SetSerialCollectiveCallbacks: fn(*mut Reader) -> Code;
    OTF2_Reader_GetGlobalDefReader: fn(*mut Reader) -> *mut c_void;
    OTF2_Reader_RegisterGlobalDefCallbacks: fn(*mut Reader, *mut c_void, *mut c_void, *mut c_void) -> Code;
    OTF2_Reader_ReadAllGlobalDefinitions: fn(*mut Reader, *mut c_void, *mut u64) -> Code;
    OTF2_Reader_CloseGlobalDefReader: fn(*mut Reader, *mut c_void) -> Code;
    OTF2_GlobalDefReaderCallbacks_New: fn() -> *mut c_void;
    OTF2_GlobalDefReaderCallbacks_Delete: fn(*mut c_void) -> ();
    OTF2_GlobalDefReaderCallbacks_SetStringCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetCommCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_Reader_SelectLocation: fn(*mut Reader, u64) -> Code;
    OTF2_Reader_OpenDefFiles: fn(*mut Reader) -> Code;
    OTF2_Reader_CloseDefFiles: fn(*mut Reader) -> Code;
    OTF2_Reader_OpenEvtFiles: fn(*mut Reader) -> Code;
    OTF2_Reader_CloseEvtFiles: fn(*mut Reader) -> Code;
    OTF2_Reader_GetDefReader: fn(*mut Reader, u64) -> *mut c_void;
    OTF2_Reader_ReadAllLocalDefinitions: fn(*mut Reader, *mut c_void, *mut u64) -> Code;
    OTF2_Reader_CloseDefReader: fn(*mut Reader, *mut c_void) -> Code;
    OTF2_Reader_GetEvtReader: fn(*mut Reader, u64) -> *mut c_void;
    OTF2_Reader_RegisterEvtCallbacks: fn(*mut Reader, *mut c_void, *mut c_void, *mut c_void) -> Code;
    OTF2_Reader_ReadAllLocalEvents: fn(*mut Reader, *mut c_void, *mut u64) -> Code;
    OTF2_Reader_CloseEvtReader: fn(*mut Reader, *mut c_void) -> Code;
    OTF2_EvtReaderCallbacks_New: fn() -> *mut c_void;
    OTF2_EvtReaderCallbacks_Delete: fn(*mut c_void) -> ();
    OTF2_EvtReaderCallbacks_SetEnterCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetLeaveCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiSendCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback: fn(*mut c_void, Cb) -> Code;
    OTF2_Error_GetDescription: fn(Code) -> *const c_char;
    OTF2_Error_RegisterCallback: fn(Cb, *mut c_void) -> Cb;
}

/// The library, opened once; or why it could not be.
fn lib() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    let open = || {
        let names: Vec<String> = match std::env::var("LOGGPS_OTF2_LIB") {
            Ok(n) if !n.is_empty() => vec![n],
            _ => ["libotf2.so", "libotf2.so.10", "libopen-trace-format2.so.10"]
                .map(String::from)
                .to_vec(),
        };
        for n in &names {
            let c = CString::new(n.as_str()).map_err(|e| e.to_string())?;
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if !h.is_null() {
                let lib = unsafe { Lib::find(h) }?;
                // Errors come back as codes, said by the reader: the library's own printing off.
                unsafe { (lib.OTF2_Error_RegisterCallback)(quiet as Cb, std::ptr::null_mut()) };
                return Ok(lib);
            }
        }
        Err(format!(
            "reading OTF2 needs the OTF2 library, and none of {} could be opened (on Debian: \
             apt-get install libopen-trace-format2-10; or set LOGGPS_OTF2_LIB to its path)",
            names.join(", ")
        ))
    };
    LIB.get_or_init(open).as_ref().map_err(Clone::clone)
}

extern "C" fn quiet(
    _: *mut c_void,
    _: *const c_char,
    _: u64,
    _: *const c_char,
    code: Code,
    _: *const c_char,
    _: *mut c_void,
) -> Code {
    code
}

/// An open archive: its global definitions read.
pub(super) struct Archive {
    lib: &'static Lib,
    reader: *mut Reader,
    /// The directory of its locations' files (the anchor's path without `.otf2`).
    dir: std::path::PathBuf,
    pub defs: Defs,
}

impl Drop for Archive {
    fn drop(&mut self) {
        unsafe { (self.lib.OTF2_Reader_Close)(self.reader) };
    }
}

impl Archive {
    /// Opens the archive of `anchor` (its `.otf2` file) and reads its global definitions.
    pub fn open(anchor: &str) -> Result<Archive, String> {
        let lib = lib()?;
        let path = CString::new(anchor).map_err(|_| "a path with a NUL byte".to_string())?;
        let reader = unsafe { (lib.OTF2_Reader_Open)(path.as_ptr()) };
        if reader.is_null() {
            return Err("the OTF2 library cannot open it as an archive's anchor file".into());
        }
        let mut a = Archive {
            lib,
            reader,
            dir: std::path::Path::new(anchor).with_extension(""),
            defs: Defs::default(),
        };
        a.check(unsafe { (lib.OTF2_Reader_SetSerialCollectiveCallbacks)(reader) })?;
        let gdr = unsafe { (lib.OTF2_Reader_GetGlobalDefReader)(reader) };
        if gdr.is_null() {
            return Err("its global definitions cannot be read".into());
        }
        let cbs = unsafe { (lib.OTF2_GlobalDefReaderCallbacks_New)() };
        unsafe {
            (lib.OTF2_GlobalDefReaderCallbacks_SetStringCallback)(cbs, def_string as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetRegionCallback)(cbs, def_region as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetLocationCallback)(cbs, def_location as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback)(cbs, def_lgroup as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback)(cbs, def_node as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetCommCallback)(cbs, def_comm as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetGroupCallback)(cbs, def_group as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback)(cbs, def_clock as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback)(cbs, def_context as Cb);
            (lib.OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback)(cbs, def_scl as Cb);
        }
        let user = (&mut a.defs as *mut Defs).cast::<c_void>();
        let code = unsafe { (lib.OTF2_Reader_RegisterGlobalDefCallbacks)(reader, gdr, cbs, user) };
        unsafe { (lib.OTF2_GlobalDefReaderCallbacks_Delete)(cbs) };
        a.check(code)?;
        let mut n = 0u64;
        let code = unsafe { (lib.OTF2_Reader_ReadAllGlobalDefinitions)(reader, gdr, &mut n) };
        unsafe { (lib.OTF2_Reader_CloseGlobalDefReader)(reader, gdr) };
        a.check(code)
            .map_err(|e| format!("its global definitions: {e}"))?;
        Ok(a)
    }

    fn check(&self, code: Code) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        let d = unsafe { (self.lib.OTF2_Error_GetDescription)(code) };
        let text = match d.is_null() {
            true => String::new(),
            false => unsafe { CStr::from_ptr(d) }.to_string_lossy().into_owned(),
        };
        Err(format!("the OTF2 library says: {text} (error {code})"))
    }

    /// The most events location `l`'s file can hold: one a byte of its `.evt` file (a record
    /// takes several), or of all the archive's files where it has no such file of its own.
    fn room(&self, l: u64) -> usize {
        let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let own = size(&self.dir.join(format!("{l}.evt")));
        let all = || {
            let files = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
            files.map(|e| size(&e.path())).sum::<u64>()
        };
        usize::try_from(if own > 0 { own } else { all() }).unwrap_or(usize::MAX)
    }

    /// Reads the events of `locations`, handing each location's to `each` in turn (ticks,
    /// with the archive's mapping tables and clock offsets applied).
    pub fn events(
        &mut self,
        locations: &[u64],
        mut each: impl FnMut(usize, &[(u64, Ev)]) -> Result<(), String>,
    ) -> Result<(), String> {
        let (lib, r) = (self.lib, self.reader);
        for &l in locations {
            self.check(unsafe { (lib.OTF2_Reader_SelectLocation)(r, l) })?;
        }
        let have_defs = unsafe { (lib.OTF2_Reader_OpenDefFiles)(r) } == 0;
        self.check(unsafe { (lib.OTF2_Reader_OpenEvtFiles)(r) })?;
        let mut readers = Vec::with_capacity(locations.len());
        for &l in locations {
            if have_defs {
                let dr = unsafe { (lib.OTF2_Reader_GetDefReader)(r, l) };
                if !dr.is_null() {
                    let mut n = 0u64;
                    let code = unsafe { (lib.OTF2_Reader_ReadAllLocalDefinitions)(r, dr, &mut n) };
                    unsafe { (lib.OTF2_Reader_CloseDefReader)(r, dr) };
                    self.check(code)
                        .map_err(|e| format!("location {l}'s definitions: {e}"))?;
                }
            }
            let er = unsafe { (lib.OTF2_Reader_GetEvtReader)(r, l) };
            if er.is_null() {
                return Err(format!("location {l}'s events cannot be read"));
            }
            readers.push(er);
        }
        if have_defs {
            unsafe { (lib.OTF2_Reader_CloseDefFiles)(r) };
        }
        let cbs = unsafe { (lib.OTF2_EvtReaderCallbacks_New)() };
        unsafe {
            (lib.OTF2_EvtReaderCallbacks_SetEnterCallback)(cbs, ev_enter as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetLeaveCallback)(cbs, ev_leave as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback)(cbs, ev_cc_enter as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback)(cbs, ev_cc_leave as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiSendCallback)(cbs, ev_send as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiIsendCallback)(cbs, ev_isend as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback)(cbs, ev_isend_done as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback)(cbs, ev_irecv_req as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiRecvCallback)(cbs, ev_recv as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiIrecvCallback)(cbs, ev_irecv as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback)(cbs, ev_coll_end as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback)(cbs, ev_cancel as Cb);
            (lib.OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback)(
                cbs,
                ev_nbc_req as Cb,
            );
            (lib.OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback)(
                cbs,
                ev_nbc_done as Cb,
            );
        }
        let mut out = Ok(());
        let mut sink = Events {
            evs: Vec::new(),
            room: 0,
        };
        for (i, &er) in readers.iter().enumerate() {
            if out.is_err() {
                unsafe { (lib.OTF2_Reader_CloseEvtReader)(r, er) };
                continue;
            }
            let l = locations[i];
            sink.evs.clear();
            sink.room = self.room(l);
            let user = (&mut sink as *mut Events).cast::<c_void>();
            let mut n = 0u64;
            let mut code = unsafe { (lib.OTF2_Reader_RegisterEvtCallbacks)(r, er, cbs, user) };
            if code == 0 {
                code = unsafe { (lib.OTF2_Reader_ReadAllLocalEvents)(r, er, &mut n) };
            }
            unsafe { (lib.OTF2_Reader_CloseEvtReader)(r, er) };
            out = match sink.evs.len() > sink.room {
                true => Err(format!(
                    "location {l}'s events: the library hands over more events than its file \
                     has bytes ({}): the file is damaged",
                    sink.room
                )),
                false => (self.check(code))
                    .map_err(|e| format!("location {l}'s events: {e}"))
                    .and_then(|()| each(i, &sink.evs)),
            };
        }
        unsafe { (lib.OTF2_EvtReaderCallbacks_Delete)(cbs) };
        unsafe { (lib.OTF2_Reader_CloseEvtFiles)(r) };
        out
    }
}

// The callbacks: each copies its record and returns OTF2_CALLBACK_SUCCESS (0). None panics.

unsafe fn defs<'a>(user: *mut c_void) -> &'a mut Defs {
    unsafe { &mut *user.cast::<Defs>() }
}

/// A location's events as the library hands them over, up to `room`: a damaged file can make
/// the library hand over events without end (seen on a mutated archive: 24 GB of them).
struct Events {
    evs: Vec<(u64, Ev)>,
    room: usize,
}

unsafe fn events<'a>(user: *mut c_void) -> &'a mut Events {
    unsafe { &mut *user.cast::<Events>() }
}

extern "C" fn def_string(user: *mut c_void, id: u32, s: *const c_char) -> Code {
    let text = match s.is_null() {
        true => String::new(),
        false => unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned(),
    };
    unsafe { defs(user) }.strings.insert(id, text);
    0
}

#[allow(clippy::too_many_arguments)]
extern "C" fn def_region(
    user: *mut c_void,
    id: u32,
    name: u32,
    _canonical: u32,
    _description: u32,
    role: u8,
    paradigm: u8,
    _flags: u32,
    file: u32,
    begin: u32,
    _end: u32,
) -> Code {
    let r = RegionDef {
        name,
        role,
        paradigm,
        file,
        begin,
    };
    unsafe { defs(user) }.regions.insert(id, r);
    0
}

extern "C" fn def_location(
    user: *mut c_void,
    id: u64,
    name: u32,
    kind: u8,
    _events: u64,
    group: u32,
) -> Code {
    unsafe { defs(user) }
        .locations
        .push((id, name, kind, group));
    0
}

extern "C" fn def_lgroup(
    user: *mut c_void,
    id: u32,
    name: u32,
    kind: u8,
    parent: u32,
    _creator: u32,
) -> Code {
    unsafe { defs(user) }
        .groups_of_locations
        .insert(id, (name, kind, parent));
    0
}

extern "C" fn def_node(user: *mut c_void, id: u32, name: u32, class: u32, parent: u32) -> Code {
    unsafe { defs(user) }
        .nodes
        .insert(id, (name, class, parent));
    0
}

extern "C" fn def_comm(
    user: *mut c_void,
    id: u32,
    name: u32,
    group: u32,
    parent: u32,
    _flags: u32,
) -> Code {
    unsafe { defs(user) }.comms.push((id, name, group, parent));
    0
}

#[allow(clippy::too_many_arguments)]
extern "C" fn def_group(
    user: *mut c_void,
    id: u32,
    _name: u32,
    kind: u8,
    paradigm: u8,
    _flags: u32,
    n: u32,
    members: *const u64,
) -> Code {
    let m = match members.is_null() || n == 0 {
        true => Vec::new(),
        false => unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec(),
    };
    unsafe { defs(user) }.groups.insert(id, (kind, paradigm, m));
    0
}

extern "C" fn def_clock(user: *mut c_void, ticks: u64, offset: u64, _len: u64, _rt: u64) -> Code {
    unsafe { defs(user) }.clock = Some((ticks, offset));
    0
}

extern "C" fn def_context(user: *mut c_void, id: u32, region: u32, scl: u32, parent: u32) -> Code {
    unsafe { defs(user) }
        .contexts
        .insert(id, (region, scl, parent));
    0
}

extern "C" fn def_scl(user: *mut c_void, id: u32, file: u32, line: u32) -> Code {
    unsafe { defs(user) }
        .locations_in_code
        .insert(id, (file, line));
    0
}

/// An event callback's leading arguments: location, time, position, user data, attributes.
macro_rules! event {
    ($name:ident($($arg:ident: $ty:ty),*) => $ev:expr) => {
        extern "C" fn $name(
            _loc: u64,
            time: u64,
            _pos: u64,
            user: *mut c_void,
            _attributes: *mut c_void,
            $($arg: $ty),*
        ) -> Code {
            let sink = unsafe { events(user) };
            // OTF2_CALLBACK_INTERRUPT past the room (said by `Archive::events`).
            if sink.evs.len() > sink.room {
                return 1;
            }
            sink.evs.push((time, $ev));
            0
        }
    };
}

event!(ev_enter(region: u32) => Ev::Enter(region));
event!(ev_leave(region: u32) => Ev::Leave(region));
event!(ev_cc_enter(context: u32, _unwound: u32) => Ev::ContextEnter(context));
event!(ev_cc_leave(context: u32) => Ev::ContextLeave(context));
event!(ev_send(to: u32, comm: u32, tag: u32, len: u64) => Ev::Send { to, comm, tag, len });
event!(ev_isend(to: u32, comm: u32, tag: u32, len: u64, req: u64) =>
    Ev::Isend { to, comm, tag, len, req });
event!(ev_isend_done(req: u64) => Ev::IsendComplete(req));
event!(ev_irecv_req(req: u64) => Ev::IrecvRequest(req));
event!(ev_recv(from: u32, comm: u32, tag: u32, len: u64) => Ev::Recv { from, comm, tag, len });
event!(ev_irecv(from: u32, comm: u32, tag: u32, len: u64, req: u64) =>
    Ev::Irecv { from, comm, tag, len, req });
event!(ev_coll_end(op: u8, comm: u32, root: u32, sent: u64, got: u64) =>
    Ev::CollEnd { op, comm, root, sent, got });
event!(ev_cancel(req: u64) => Ev::Cancelled(req));
event!(ev_nbc_req(req: u64) => Ev::NbcRequest(req));
event!(ev_nbc_done(_op: u8, comm: u32, root: u32, sent: u64, got: u64, req: u64) =>
    Ev::NbcComplete { comm, root, sent, got, req });
