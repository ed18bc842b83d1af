//! MuJoCo's C library, opened once from the `mujoco` Python wheel, and one simulation
//! (a model and its data) driven through the few functions the locomotion tasks need.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// `mjSTATE_TIME`: the simulation time.
pub(crate) const TIME: c_uint = 1 << 0;
/// `mjSTATE_QPOS`: the joint positions.
pub(crate) const QPOS: c_uint = 1 << 1;
/// `mjSTATE_QVEL`: the joint velocities.
pub(crate) const QVEL: c_uint = 1 << 2;
/// `mjSTATE_CTRL`: the actuators' controls.
pub(crate) const CTRL: c_uint = 1 << 5;
/// `mjSTATE_INTEGRATION`: everything the next step depends on (time, positions, velocities,
/// activations, the solver's warm start, controls and applied forces).
pub(crate) const INTEGRATION: c_uint = (1 << 13) - 1;

/// The MuJoCo versions whose state signatures are the constants above, as `mj_version`
/// numbers them: 3.0.0 (300) up to 3.4.x. 3.5.0 renumbered the state elements (and
/// `mj_version` with them, to 3005000).
const VERSIONS: std::ops::Range<c_int> = 300..350;

/// The functions of `libmujoco` used here, resolved once.
struct Api {
    load_xml: unsafe extern "C" fn(*const c_char, *const c_void, *mut c_char, c_int) -> *mut c_void,
    make_data: unsafe extern "C" fn(*const c_void) -> *mut c_void,
    delete_data: unsafe extern "C" fn(*mut c_void),
    delete_model: unsafe extern "C" fn(*mut c_void),
    reset_data: unsafe extern "C" fn(*const c_void, *mut c_void),
    step: unsafe extern "C" fn(*const c_void, *mut c_void),
    forward: unsafe extern "C" fn(*const c_void, *mut c_void),
    state_size: unsafe extern "C" fn(*const c_void, c_uint) -> c_int,
    get_state: unsafe extern "C" fn(*const c_void, *const c_void, *mut f64, c_uint),
    set_state: unsafe extern "C" fn(*const c_void, *mut c_void, *const f64, c_uint),
    /// Gymnasium's folder of model files (`hopper.xml`, ...), beside the library it uses.
    assets: PathBuf,
}

/// How to get MuJoCo, for errors that find none.
pub(crate) const INSTALL_HINT: &str = "the native MuJoCo tasks load libmujoco from the `mujoco` Python package and \
     the model files from Gymnasium's: run ./scripts/install-gym.sh and set RLGRAPH_PYTHON to the Python it prints \
     (or to any Python with gymnasium and mujoco installed), which the bridge (`gym:Hopper-v5`) needs as well";

/// The library, opened on first use from the MuJoCo that `python` imports; once one is open
/// it serves the whole process, whatever Python later callers name. A failure is not kept,
/// so a later call with another Python can still succeed. The error says what is missing
/// and how to install it.
fn api(python: &str) -> Result<&'static Api, String> {
    static API: Mutex<Option<&'static Api>> = Mutex::new(None);
    let mut opened = API.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(api) = *opened {
        return Ok(api);
    }
    let api: &'static Api = Box::leak(Box::new(open(python)?));
    *opened = Some(api);
    Ok(api)
}

/// Asks `python` where the `mujoco` wheel's library and Gymnasium's model files are.
fn locate(python: &str) -> Result<(PathBuf, PathBuf), String> {
    const SCRIPT: &str = "import os, mujoco, gymnasium.envs.mujoco as g\n\
        d = os.path.dirname(mujoco.__file__)\n\
        libs = sorted(f for f in os.listdir(d) if f.startswith('libmujoco'))\n\
        print(os.path.join(d, libs[0]) if libs else '')\n\
        print(os.path.join(os.path.dirname(g.__file__), 'assets'))\n";
    let out = std::process::Command::new(python)
        .args(["-c", SCRIPT])
        .output()
        .map_err(|e| format!("cannot run Python ({python}): {e}; {INSTALL_HINT}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or("no output");
        return Err(format!(
            "{python} cannot import mujoco and gymnasium ({last}); {INSTALL_HINT}"
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    match (lines.next(), lines.next()) {
        (Some(lib), Some(assets)) if !lib.is_empty() => Ok((lib.into(), assets.into())),
        _ => Err(format!(
            "{python}'s mujoco package has no libmujoco beside it; {INSTALL_HINT}"
        )),
    }
}

fn open(python: &str) -> Result<Api, String> {
    let (path, assets) = locate(python)?;
    // SAFETY: libmujoco's initializers only set up its own globals; the library stays loaded
    // for the life of the process (it is leaked below), so the function pointers stay valid.
    let lib = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("cannot load {}: {e}; {INSTALL_HINT}", path.display()))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    macro_rules! symbol {
        ($name:literal) => {
            symbol(lib, &path, concat!($name, "\0"))?
        };
    }
    let version: unsafe extern "C" fn() -> c_int = symbol!("mj_version");
    // SAFETY: `mj_version` takes nothing and returns an int.
    let found = unsafe { version() };
    if !VERSIONS.contains(&found) {
        return Err(format!(
            "{} is MuJoCo {}; the native tasks know the state layout of 3.0.0 to 3.4.x (tested: \
             3.3.7, which scripts/gym-requirements.txt pins); install that, or use the bridge (gym:Hopper-v5)",
            path.display(),
            version_name(found)
        ));
    }
    // MuJoCo's defaults print warnings to stdout (where `rlgraph` writes its JSON) and into
    // MUJOCO_LOG.TXT in the working folder, and end the process on errors.
    let warning: *mut Option<unsafe extern "C" fn(*const c_char)> = symbol!("mju_user_warning");
    let error: *mut Option<unsafe extern "C" fn(*const c_char)> = symbol!("mju_user_error");
    // SAFETY: both are MuJoCo's global handler pointers (`mujoco.h`), set before any model is
    // loaded from this library; a null or a function taking the message are what they hold.
    unsafe {
        *warning = Some(on_warning);
        *error = Some(on_error);
    }
    Ok(Api {
        load_xml: symbol!("mj_loadXML"),
        make_data: symbol!("mj_makeData"),
        delete_data: symbol!("mj_deleteData"),
        delete_model: symbol!("mj_deleteModel"),
        reset_data: symbol!("mj_resetData"),
        step: symbol!("mj_step"),
        forward: symbol!("mj_forward"),
        state_size: symbol!("mj_stateSize"),
        get_state: symbol!("mj_getState"),
        set_state: symbol!("mj_setState"),
        assets,
    })
}

/// MuJoCo's version number as `major.minor.patch`, in either of its numberings.
fn version_name(v: c_int) -> String {
    match v >= 1_000_000 {
        true => format!("{}.{}.{}", v / 1_000_000, v / 1000 % 1000, v % 1000),
        false => format!("{}.{}.{}", v / 100, v / 10 % 10, v % 10),
    }
}

/// The text of a message MuJoCo hands a handler.
///
/// # Safety
/// `message` is null or a NUL-terminated string.
unsafe fn message_text(message: *const c_char) -> String {
    match message.is_null() {
        true => String::new(),
        // SAFETY: MuJoCo passes a NUL-terminated message.
        false => unsafe { std::ffi::CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned(),
    }
}

/// MuJoCo's warnings (an unstable simulation it reset, say) go to stderr.
unsafe extern "C" fn on_warning(message: *const c_char) {
    // SAFETY: MuJoCo passes a NUL-terminated message.
    eprintln!("MuJoCo warning: {}", unsafe { message_text(message) });
}

/// MuJoCo's errors (out of memory in its arena, say) cannot be returned through its API:
/// MuJoCo requires the handler not to return, so the process ends, saying why on stderr.
unsafe extern "C" fn on_error(message: *const c_char) {
    // SAFETY: MuJoCo passes a NUL-terminated message.
    eprintln!("MuJoCo error (the process cannot go on): {}", unsafe {
        message_text(message)
    });
    std::process::abort();
}

/// The symbol `name` (NUL-terminated) of `lib`, as the type the caller stores it as.
fn symbol<T: Copy>(lib: &'static libloading::Library, path: &Path, name: &str) -> Result<T, String> {
    // SAFETY: every caller stores the symbol as the type `mujoco.h` declares for it (for a
    // variable, a pointer to that type), and the library is never unloaded.
    let found = unsafe { lib.get::<T>(name.as_bytes()) };
    found
        .map(|f| *f)
        .map_err(|e| format!("{} has no {}: {e}", path.display(), name.trim_end_matches('\0')))
}

/// One MuJoCo simulation: a model loaded from Gymnasium's file and its data.
pub(crate) struct Sim {
    api: &'static Api,
    model: *mut c_void,
    data: *mut c_void,
}

// SAFETY: a model and its data belong to this value alone; MuJoCo keeps no thread-local
// state for them, so moving them to another thread is sound (they are never shared).
unsafe impl Send for Sim {}

impl Sim {
    /// Loads Gymnasium's model file `file` (`hopper.xml`), with the MuJoCo `python` imports.
    pub(crate) fn load(python: &str, file: &str) -> Result<Sim, String> {
        let api = api(python)?;
        let path = api.assets.join(file);
        let c_path = path_to_c(&path)?;
        let mut error = vec![0 as c_char; 1000];
        // SAFETY: the path is NUL-terminated, the VFS may be null, and the error buffer's
        // length is passed with it.
        let model = unsafe { (api.load_xml)(c_path.as_ptr(), std::ptr::null(), error.as_mut_ptr(), 1000) };
        if model.is_null() {
            let bytes: Vec<u8> = error.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
            return Err(format!(
                "MuJoCo cannot load {}: {}",
                path.display(),
                String::from_utf8_lossy(&bytes)
            ));
        }
        // SAFETY: `model` is a valid model just loaded.
        let data = unsafe { (api.make_data)(model) };
        if data.is_null() {
            // SAFETY: the model is valid and owned here.
            unsafe { (api.delete_model)(model) };
            return Err(format!("MuJoCo cannot allocate the data of {}", path.display()));
        }
        Ok(Sim { api, model, data })
    }

    /// The number of values the state elements `sig` hold.
    pub(crate) fn size(&self, sig: c_uint) -> usize {
        // SAFETY: the model is valid, and every signature used here is below 2^mjNSTATE
        // (MuJoCo errors on larger ones).
        let n = unsafe { (self.api.state_size)(self.model, sig) };
        n.max(0) as usize
    }

    /// Resets the data to the model's defaults (`mj_resetData`).
    pub(crate) fn reset(&mut self) {
        // SAFETY: model and data are valid and belong together.
        unsafe { (self.api.reset_data)(self.model, self.data) }
    }

    /// Advances one physics step (`mj_step`).
    pub(crate) fn step(&mut self) {
        // SAFETY: model and data are valid and belong together.
        unsafe { (self.api.step)(self.model, self.data) }
    }

    /// Recomputes the derived quantities of the current state (`mj_forward`).
    pub(crate) fn forward(&mut self) {
        // SAFETY: model and data are valid and belong together.
        unsafe { (self.api.forward)(self.model, self.data) }
    }

    /// Writes the state elements `sig` into `out`, which must hold `size(sig)` values.
    pub(crate) fn get(&self, sig: c_uint, out: &mut [f64]) {
        if out.len() == self.size(sig) {
            // SAFETY: `out` holds exactly the values MuJoCo writes for `sig`.
            unsafe { (self.api.get_state)(self.model, self.data, out.as_mut_ptr(), sig) }
        }
    }

    /// Sets the state elements `sig` from `values`, which must hold `size(sig)` values;
    /// returns false (setting nothing) otherwise.
    pub(crate) fn set(&mut self, sig: c_uint, values: &[f64]) -> bool {
        if values.len() != self.size(sig) {
            return false;
        }
        // SAFETY: `values` holds exactly the values MuJoCo reads for `sig`.
        unsafe { (self.api.set_state)(self.model, self.data, values.as_ptr(), sig) };
        true
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // SAFETY: both were made in `load` and are freed once, data before its model.
        unsafe {
            (self.api.delete_data)(self.data);
            (self.api.delete_model)(self.model);
        }
    }
}

fn path_to_c(path: &Path) -> Result<CString, String> {
    CString::new(path.to_string_lossy().as_bytes()).map_err(|_| format!("{} holds a NUL byte", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_in_both_of_mujocos_numberings() {
        assert_eq!(version_name(337), "3.3.7");
        assert_eq!(version_name(3_005_000), "3.5.0");
        assert!(VERSIONS.contains(&337) && !VERSIONS.contains(&3_005_000) && !VERSIONS.contains(&237));
    }

    #[test]
    fn a_python_that_cannot_run_or_import_mujoco_is_named_with_the_way_to_install_it() {
        let missing = open("/nonexistent/python3").err().unwrap_or_default();
        assert!(
            missing.contains("cannot run Python (/nonexistent/python3)"),
            "{missing}"
        );
        assert!(missing.contains("./scripts/install-gym.sh"), "{missing}");
        // `false` runs and fails, as a Python without the packages does.
        let failing = open("false").err().unwrap_or_default();
        assert!(
            failing.contains("false cannot import mujoco and gymnasium"),
            "{failing}"
        );
        assert!(failing.contains("RLGRAPH_PYTHON"), "{failing}");
    }
}
