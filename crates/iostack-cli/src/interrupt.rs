//! Ctrl-C and SIGTERM: stop at once, leave nothing half-written.
//!
//! The installed `iostack` command runs this crate inside Python, whose own SIGINT handler only
//! sets a flag that Python looks at once the Rust code returns: a long `sim` or `gen` would run
//! to its end and then print a `KeyboardInterrupt` traceback. So while a command runs, SIGINT
//! and SIGTERM are blocked in its threads and taken by one thread waiting for them
//! (`sigwait`), which removes the temporary files outputs are being written to (see
//! `iostack::trace::write::OutputFile`; nothing else is written before it is complete) and ends
//! the process with the shell's code for the signal: 130 for SIGINT, 143 for SIGTERM.

/// Signals are handled by a waiting thread until the returned guard is dropped.
pub struct Guard {
    #[cfg(unix)]
    old: libc::sigset_t,
    #[cfg(unix)]
    waiter: Option<std::thread::JoinHandle<()>>,
    #[cfg(unix)]
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[cfg(unix)]
pub fn install() -> Guard {
    // SAFETY: plain libc calls on local, initialised signal sets.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let mut old: libc::sigset_t = std::mem::zeroed();
        // Threads spawned from here on (the reader, the workers) inherit the blocked set.
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let waiting = set;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let finished = done.clone();
        let waiter = std::thread::Builder::new().name("iostack-signals".into()).spawn(move || {
            let mut sig: libc::c_int = 0;
            // The guard wakes this thread with a SIGTERM of its own once the command is done.
            if libc::sigwait(&waiting, &mut sig) == 0 && !finished.load(std::sync::atomic::Ordering::SeqCst) {
                iostack::trace::write::temps::remove_all();
                let msg: &[u8] = if sig == libc::SIGINT { b"\niostack: interrupted\n" } else { b"iostack: terminated\n" };
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(128 + sig);
            }
        });
        Guard { old, waiter: waiter.ok(), done }
    }
}

#[cfg(not(unix))]
pub fn install() -> Guard {
    Guard {}
}

#[cfg(unix)]
impl Drop for Guard {
    fn drop(&mut self) {
        use std::os::unix::thread::JoinHandleExt;
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the waiter thread is alive until joined; the mask is the one saved by `install`.
        unsafe {
            if let Some(w) = self.waiter.take() {
                libc::pthread_kill(w.as_pthread_t(), libc::SIGTERM);
                let _ = w.join();
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}
