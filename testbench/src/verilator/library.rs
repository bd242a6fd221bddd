//! Loading a built model library with `libloading` and checking it matches the design.

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::Library;

use super::slot::Layout;
use super::{shim, BridgeError, PortDirection, PortInfo};

type FnU32 = unsafe extern "C" fn() -> u32;
type FnPortU32 = unsafe extern "C" fn(u32) -> u32;
type FnCreate = unsafe extern "C" fn() -> *mut c_void;
type FnHandle = unsafe extern "C" fn(*mut c_void);
type FnHandleU32 = unsafe extern "C" fn(*mut c_void) -> u32;
type FnPortAddr = unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void;
type FnStep = unsafe extern "C" fn(*mut c_void, u32, u64) -> c_int;
type FnTraceOpen = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type FnTraceDump = unsafe extern "C" fn(*mut c_void, u64);
type FnTraceClose = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The shim's entry points, copied out of the library (valid while it stays loaded).
pub(super) struct Api {
    pub(super) create: FnCreate,
    pub(super) destroy: FnHandle,
    pub(super) eval: FnHandle,
    pub(super) got_finish: FnHandleU32,
    pub(super) port_addr: FnPortAddr,
    pub(super) step: FnStep,
    pub(super) cycles: FnStep,
    pub(super) trace_open: FnTraceOpen,
    pub(super) trace_dump: FnTraceDump,
    pub(super) trace_close: FnTraceClose,
}

/// A loaded model library, shared by every instance created from it.
pub(super) struct Loaded {
    pub(super) api: Api,
    pub(super) ports: Vec<PortInfo>,
    pub(super) has_trace: bool,
    pub(super) path: PathBuf,
    /// Keeps the code behind `api` mapped; dropped last.
    _library: Library,
}

/// Looks up `name` (NUL-terminated) in `lib` as a `T` function pointer.
///
/// # Safety
/// `T` must be the symbol's real type.
unsafe fn symbol<T: Copy>(lib: &Library, path: &Path, name: &[u8]) -> Result<T, BridgeError> {
    // SAFETY: forwarded to the caller: `T` is the symbol's type.
    unsafe { lib.get::<T>(name) }
        .map(|s| *s)
        .map_err(|source| BridgeError::Load {
            path: path.to_path_buf(),
            source,
        })
}

impl Loaded {
    /// Loads `path` and checks it was built for `ports`.
    pub(super) fn open(path: &Path, ports: &[PortInfo]) -> Result<Self, BridgeError> {
        // SAFETY: the library is one this bridge built from its own shim; its static
        // initialisers are Verilator's runtime and the model's, which are safe to run.
        let lib = unsafe { Library::new(path) }.map_err(|source| BridgeError::Load {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY (all `symbol` calls): the types match the `WS_API` declarations in
        // shim.rs, which generated this library.
        let (abi, count, width, is_input, bytes, has_trace, api) = unsafe {
            (
                symbol::<FnU32>(&lib, path, b"ws_abi_version\0")?,
                symbol::<FnU32>(&lib, path, b"ws_port_count\0")?,
                symbol::<FnPortU32>(&lib, path, b"ws_port_width\0")?,
                symbol::<FnPortU32>(&lib, path, b"ws_port_is_input\0")?,
                symbol::<FnPortU32>(&lib, path, b"ws_port_bytes\0")?,
                symbol::<FnU32>(&lib, path, b"ws_has_trace\0")?,
                Api {
                    create: symbol(&lib, path, b"ws_create\0")?,
                    destroy: symbol(&lib, path, b"ws_destroy\0")?,
                    eval: symbol(&lib, path, b"ws_eval\0")?,
                    got_finish: symbol(&lib, path, b"ws_got_finish\0")?,
                    port_addr: symbol(&lib, path, b"ws_port_addr\0")?,
                    step: symbol(&lib, path, b"ws_step\0")?,
                    cycles: symbol(&lib, path, b"ws_cycles\0")?,
                    trace_open: symbol(&lib, path, b"ws_trace_open\0")?,
                    trace_dump: symbol(&lib, path, b"ws_trace_dump\0")?,
                    trace_close: symbol(&lib, path, b"ws_trace_close\0")?,
                },
            )
        };
        let mismatch = |reason: String| BridgeError::Mismatch {
            path: path.to_path_buf(),
            reason,
        };
        // SAFETY: argument-free (or plain integer) queries of constant tables.
        unsafe {
            if abi() != shim::ABI_VERSION {
                return Err(mismatch(format!("ABI {} != {}", abi(), shim::ABI_VERSION)));
            }
            if count() as usize != ports.len() {
                return Err(mismatch(format!(
                    "{} ports, expected {}",
                    count(),
                    ports.len()
                )));
            }
            for (i, p) in ports.iter().enumerate() {
                let input = p.direction == PortDirection::In;
                if width(i as u32) != p.width || (is_input(i as u32) != 0) != input {
                    return Err(mismatch(format!("port {i} `{}` differs", p.name)));
                }
                let expected = Layout::of(p.width).bytes();
                if bytes(i as u32) as usize != expected {
                    return Err(mismatch(format!(
                        "port {i} `{}` is a member of {} bytes, expected {expected} for {} bits",
                        p.name,
                        bytes(i as u32),
                        p.width
                    )));
                }
            }
        }
        // SAFETY: as above.
        let has_trace = unsafe { has_trace() } != 0;
        Ok(Self {
            api,
            ports: ports.to_vec(),
            has_trace,
            path: path.to_path_buf(),
            _library: lib,
        })
    }
}
