//! Who this process is, and whether another one still lives: the facts
//! `mark_interrupted` needs to tell a run that is still going from one whose
//! process died. Read from `/proc` and `/etc`; no unsafe code, no libc.

use std::path::Path;

/// Whether process `pid` exists on this machine. Where `/proc` is not
/// mounted it cannot be told, and every process counts as alive (a stale
/// heartbeat still marks its runs interrupted).
pub fn pid_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    pid != 0 && Path::new(&format!("/proc/{pid}")).exists()
}

/// This machine's host name (`/proc/sys/kernel/hostname`, then
/// `/etc/hostname`), or `localhost` when neither can be read.
pub fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .map(|text| text.trim().to_string())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_huge_pid_is_not() {
        assert!(pid_alive(std::process::id()));
        if Path::new("/proc/self").exists() {
            assert!(!pid_alive(u32::MAX));
            assert!(!pid_alive(0));
        }
    }

    #[test]
    fn the_host_has_a_name() {
        let name = hostname();
        assert!(!name.is_empty());
        assert_eq!(name, name.trim());
    }
}
