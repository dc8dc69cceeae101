//! Interruption: Ctrl-C (SIGINT) and SIGTERM set a process-wide flag instead of killing the
//! process, so that a run stops between batches and never leaves a truncated output file.
//!
//! [`install`] is called once by the command line. The simulation checks [`requested`] before
//! each batch and skips the remaining work; the command line then writes nothing more (files
//! already renamed into place are complete) and exits with [`exit_code`]: 130 for SIGINT and 143
//! for SIGTERM, as shells report a process killed by those signals. A second signal of the same
//! kind ends the process at once (with the same code); files are written to a temporary name and
//! renamed, so even then no output file is partial.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The number of the signal received, 0 while none.
static SIGNAL: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicUsize> {
    SIGNAL.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// Routes SIGINT and SIGTERM to the flag (on platforms with signals; elsewhere Ctrl-C keeps its
/// default action).
///
/// # Errors
/// The operating system's error when a handler cannot be registered.
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag as sf;
        for sig in [SIGINT, SIGTERM] {
            // Order matters: the conditional shutdown sees the flag before this signal sets it,
            // so only a second signal ends the process at once.
            let signal_flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
            sf::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&signal_flag))?;
            sf::register(sig, signal_flag)?;
            sf::register_usize(sig, Arc::clone(flag()), sig as usize)?;
        }
    }
    Ok(())
}

/// Keeps SIGXFSZ (a write past the file size limit, `ulimit -f`) from killing the process: with
/// a handler installed the write fails with `EFBIG` instead, and the writer reports the file.
///
/// # Errors
/// The operating system's error when the handler cannot be registered.
pub fn survive_file_size_limit() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::SIGXFSZ;
        signal_hook::flag::register(SIGXFSZ, Arc::new(std::sync::atomic::AtomicBool::new(false)))?;
    }
    Ok(())
}

/// True once SIGINT or SIGTERM has arrived: long loops should stop and skip their work.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed) != 0
}

/// The exit code that reports the interruption: 128 + the signal number (130 for SIGINT, 143
/// for SIGTERM), or `None` when no signal arrived.
pub fn exit_code() -> Option<u8> {
    match flag().load(Ordering::Relaxed) {
        0 => None,
        sig => Some(u8::try_from(128 + sig).unwrap_or(u8::MAX)),
    }
}

/// The signal's name for messages.
pub fn signal_name() -> &'static str {
    match exit_code() {
        Some(130) => "SIGINT (Ctrl-C)",
        Some(143) => "SIGTERM",
        Some(_) => "a signal",
        None => "nothing",
    }
}

/// Sets the flag as SIGINT would, for a host that receives the signal itself (the Python
/// binding catches Ctrl-C as `KeyboardInterrupt` and asks the running work to stop).
pub fn request_sigint() {
    flag().store(2, Ordering::Relaxed);
}

/// Clears the flag once the interrupted work has stopped, so that a host that goes on (a Python
/// session after `KeyboardInterrupt`) can run again.
pub fn clear() {
    flag().store(0, Ordering::Relaxed);
}
