//! Replacement policies written in Python: a subclass of `iostack.Policy` run by the Rust engines.
//!
//! [`PyPolicy`] implements the core's [`Policy`] trait by calling the Python object's `find`,
//! `insert`, `evict` and (if it has one) `remove`, holding the GIL only around those calls; the
//! engines run with the GIL released, so other Python threads keep running between them.
//!
//! The Python object decides *what* to evict; iostack keeps the books. The wrapper tracks which
//! keys the object holds and their sizes (as inserted), so `contains`, `occupied` and `len` are
//! answered without calling Python, the caller's "evict until it fits" loop keeps the cache
//! within its capacity, and every answer is checked against the contract of [`Policy`]:
//!
//! - `find` must return a bool (hit or miss), and a hit only for a key the object holds, a miss
//!   only for one it does not (entries leave only through `evict` or `remove`);
//! - `evict` must return the key of an entry the object holds (which then counts as gone).
//!
//! A breach, or an exception raised by the object, is recorded with the reference it happened at
//! and reported once the run ends (a `ValueError` naming the class and the breach, or the
//! object's own exception); from then on the wrapper stops calling Python and keeps the caller's
//! view consistent by itself (hits on what it holds, any held entry as victim), so the run ends
//! quickly and no engine sees an inconsistent policy. Its result is discarded, never returned.

use std::sync::{Arc, Mutex};

use iostack::cache::{Access, Evicted, Key, KeyMap, Origin, Policy};
use iostack::trace::Op;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// One reference, as a Python policy sees it (`iostack.Access`): the fields a Rust policy gets.
#[pyclass(name = "Access", module = "iostack", frozen)]
pub struct PyAccess {
    /// Identity of the object or block (in block mode: device in the top 16 bits, block number
    /// below).
    #[pyo3(get)]
    key: u64,
    /// Size in the cache's unit: 1 in unit-size and block mode, bytes in sized object mode.
    #[pyo3(get)]
    size: u64,
    /// Process id of the request.
    #[pyo3(get)]
    pid: u32,
    /// The request's time (ns from the start of the trace in `simulate`, the simulated clock in
    /// `run`).
    #[pyo3(get)]
    time_ns: u64,
    /// Position of this reference in the reference stream (0-based).
    #[pyo3(get)]
    vtime: u64,
    op: Option<Op>,
    next_access: u64,
    origin: Origin,
}

#[pymethods]
impl PyAccess {
    /// `'R'` or `'W'` (None when the engine does not know).
    #[getter]
    fn op(&self) -> Option<&'static str> {
        self.op.map(|o| if o.is_write() { "W" } else { "R" })
    }

    /// Position of the next reference to `key`, or None if there is none or it is not computed
    /// (only for a class with `needs_future = True`, in `simulate`).
    #[getter]
    fn next_access(&self) -> Option<u64> {
        (self.next_access != u64::MAX).then_some(self.next_access)
    }

    /// `'demand'`, or `'prefetch'` for a block a prefetcher brings in (timed stack).
    #[getter]
    fn origin(&self) -> &'static str {
        match self.origin {
            Origin::Demand => "demand",
            Origin::Prefetch { .. } => "prefetch",
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Access(key={}, size={}, pid={}, op={}, time_ns={}, vtime={}, origin='{}')",
            self.key,
            self.size,
            self.pid,
            self.op().map_or("None".to_string(), |o| format!("'{o}'")),
            self.time_ns,
            self.vtime,
            self.origin()
        )
    }
}

impl From<&Access> for PyAccess {
    fn from(a: &Access) -> Self {
        PyAccess { key: a.key, size: a.size, pid: a.pid, time_ns: a.time_ns, vtime: a.vtime, op: a.op, next_access: a.next_access, origin: a.origin }
    }
}

/// Where a Python policy records the first thing that went wrong in a run, for the binding to
/// raise when the run is over.
pub type Failure = Arc<Mutex<Option<PyErr>>>;

/// Takes the failure a run recorded, if any.
pub fn take_failure(f: &Failure) -> Option<PyErr> {
    f.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The name a Python policy class goes by in results: its `name` attribute if it is a string,
/// else the class name.
pub fn class_name(cls: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(n) = cls.getattr("name") {
        if let Ok(s) = n.extract::<String>() {
            return Ok(s);
        }
    }
    Ok(cls.getattr("__name__")?.extract::<String>()?)
}

/// Python's state for a thread Python did not start (a sweep's worker), kept from the first call
/// into a Python policy until the thread ends. Without it every call would create and destroy
/// the thread's interpreter state (`PyGILState_Ensure` on a thread with none), which costs tens
/// of microseconds; with it, a call only takes and releases the GIL.
struct KeptThreadState {
    gil: pyo3::ffi::PyGILState_STATE,
    thread: *mut pyo3::ffi::PyThreadState,
}

impl Drop for KeptThreadState {
    fn drop(&mut self) {
        // The thread is ending: take the GIL back with the state kept, then let Python forget it.
        unsafe {
            pyo3::ffi::PyEval_RestoreThread(self.thread);
            pyo3::ffi::PyGILState_Release(self.gil);
        }
    }
}

thread_local! {
    static KEPT: std::cell::RefCell<Option<KeptThreadState>> = const { std::cell::RefCell::new(None) };
}

/// Creates and keeps Python's state for this thread if it has none. Threads Python knows (the
/// caller's) already have one and are left alone. Called with the GIL not held by this thread.
fn keep_thread_state() {
    KEPT.with(|k| {
        if k.borrow().is_some() {
            return;
        }
        // SAFETY: the interpreter is running (a Python call started this run) and this thread
        // holds no GIL: a thread with no Python state cannot hold it.
        unsafe {
            if !pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                return;
            }
            let gil = pyo3::ffi::PyGILState_Ensure();
            let thread = pyo3::ffi::PyEval_SaveThread();
            *k.borrow_mut() = Some(KeptThreadState { gil, thread });
        }
    });
}

/// An instance of a Python policy class, driven through the [`Policy`] contract.
pub struct PyPolicy {
    name: String,
    obj: Py<PyAny>,
    capacity: u64,
    /// Keys the object holds, with the size each was inserted with.
    held: KeyMap<u64>,
    occupied: u64,
    has_remove: bool,
    needs_future: bool,
    failure: Failure,
    failed: bool,
}

impl PyPolicy {
    /// Builds one instance: `cls(capacity)`. `failure` collects what goes wrong while it runs.
    pub fn new(cls: &Bound<'_, PyType>, capacity: u64, failure: Failure) -> PyResult<PyPolicy> {
        let name = class_name(cls.as_any())?;
        let obj = cls.call1((capacity,))?;
        for method in ["find", "insert", "evict"] {
            if !obj.getattr(method).is_ok_and(|m| m.is_callable()) {
                return Err(PyValueError::new_err(format!("policy {name}: has no {method}() method (see iostack.Policy)")));
            }
        }
        let has_remove = obj.getattr("remove").is_ok_and(|m| m.is_callable());
        let needs_future = match cls.getattr("needs_future") {
            Ok(v) => v.is_truthy()?,
            Err(_) => false,
        };
        Ok(PyPolicy { name, obj: obj.unbind(), capacity, held: KeyMap::default(), occupied: 0, has_remove, needs_future, failure, failed: false })
    }

    /// Records the first failure and stops calling Python.
    fn fail(&mut self, err: PyErr) {
        self.failed = true;
        let mut slot = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
    }

    fn breach(&mut self, a: Option<&Access>, what: String) {
        let at = a.map_or(String::new(), |a| format!(" at reference {} (key {})", a.vtime, a.key));
        let msg = format!("policy {} broke the policy contract{at}: {what}", self.name);
        self.fail(PyValueError::new_err(msg));
    }

    /// Calls `method(arg)` on the object with the GIL held; the result is turned into `T` by
    /// `convert` (also with the GIL held). On an exception, records it and returns None.
    fn call<T>(&mut self, method: &str, arg: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>, convert: impl FnOnce(&Bound<'_, PyAny>) -> Result<T, String>) -> Option<Result<T, String>> {
        keep_thread_state();
        let out = Python::with_gil(|py| -> PyResult<Result<T, String>> {
            let arg = arg(py)?;
            let r = self.obj.bind(py).call_method1(method, (arg,))?;
            Ok(convert(&r))
        });
        match out {
            Ok(r) => Some(r),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn access_arg(a: &Access) -> impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + '_ {
        move |py| Ok(Bound::new(py, PyAccess::from(a))?.into_any())
    }

    fn forget(&mut self, key: Key) -> Option<u64> {
        let size = self.held.remove(&key)?;
        self.occupied -= size;
        Some(size)
    }
}

impl Policy for PyPolicy {
    fn name(&self) -> &str {
        &self.name
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.held.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.held.contains_key(&key)
    }

    fn find(&mut self, a: &Access) -> bool {
        let holds = self.held.contains_key(&a.key);
        if self.failed {
            return holds;
        }
        let answer = self.call("find", Self::access_arg(a), |r| {
            if r.is_none() {
                return Err("find() returned None; it must return True (hit) or False (miss)".to_string());
            }
            r.is_truthy().map_err(|e| format!("find() returned a value with no truth value: {e}"))
        });
        match answer {
            None => holds,
            Some(Err(what)) => {
                self.breach(Some(a), what);
                holds
            }
            Some(Ok(hit)) => {
                if hit && !holds {
                    self.breach(Some(a), format!("find() reported a hit on key {}, which it does not hold (never inserted, or evicted)", a.key));
                } else if !hit && holds {
                    self.breach(
                        Some(a),
                        format!("find() reported a miss on key {}, which it holds: entries leave only through evict() or remove()", a.key),
                    );
                }
                holds
            }
        }
    }

    fn insert(&mut self, a: &Access) {
        if !self.failed {
            self.call("insert", Self::access_arg(a), |_| Ok(()));
        }
        if self.held.insert(a.key, a.size).is_none() {
            self.occupied += a.size;
        }
    }

    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        if !self.failed {
            let answer = self.call("evict", Self::access_arg(a), |r| {
                if r.is_none() {
                    return Err("evict() returned None; it must return the key of the entry it gives up".to_string());
                }
                r.extract::<u64>().map_err(|_| format!("evict() returned {}, not a key (a non-negative int)", r.repr().map_or("?".into(), |s| s.to_string())))
            });
            match answer {
                None => {}
                Some(Err(what)) => self.breach(Some(a), what),
                Some(Ok(key)) => match self.forget(key) {
                    Some(size) => return Some(Evicted { key, size }),
                    None => self.breach(Some(a), format!("evict() returned key {key}, which it does not hold")),
                },
            }
        }
        // Failed: give up any held entry, so that the caller still sees a consistent policy.
        let key = *self.held.keys().next()?;
        let size = self.forget(key)?;
        Some(Evicted { key, size })
    }

    fn remove(&mut self, key: Key) -> bool {
        if !self.held.contains_key(&key) {
            return false;
        }
        if !self.failed {
            if self.has_remove {
                self.call("remove", |py| Ok(key.into_pyobject(py)?.into_any()), |_| Ok(()));
            } else {
                self.breach(None, format!("key {key} must be removed, and the class defines no remove(key)"));
            }
        }
        self.forget(key);
        true
    }

    /// The default loop with the GIL taken once per batch rather than once per call.
    fn get_batch(&mut self, batch: &[Access], hits: &mut [bool]) {
        assert_eq!(batch.len(), hits.len());
        if self.failed {
            for (a, hit) in batch.iter().zip(hits.iter_mut()) {
                *hit = self.get(a);
            }
            return;
        }
        keep_thread_state();
        Python::with_gil(|_| {
            for (a, hit) in batch.iter().zip(hits.iter_mut()) {
                *hit = self.get(a);
            }
        })
    }

    fn needs_future(&self) -> bool {
        self.needs_future
    }

    /// The wrapper's own books (the held keys and sizes); the Python object's memory is not
    /// counted.
    fn metadata_bytes(&self) -> usize {
        self.held.capacity() * (2 * std::mem::size_of::<u64>() + 1)
    }
}
