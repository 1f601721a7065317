//! The mount namespace of a confined program: everything read-only but
//! the workspace and the temporary folder, which are `noexec`, `nosuid`
//! and `nodev`; and, in a PID namespace of its own, a `/proc` that shows
//! only the namespace's processes. Plain system calls only: this runs
//! between `fork` and `exec` (see `child.rs`).

use std::ffi::CString;
use std::io;

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Make every mount of the (new) mount namespace read-only, then give
/// `writable` back their writes through bind mounts of themselves —
/// without execution, set-uid bits or device nodes, so no loader can map
/// their bytes as code.
///
/// # Safety
/// Plain system calls on prepared C strings; only in the child before
/// `exec`, after `unshare(CLONE_NEWNS)`.
pub(crate) unsafe fn read_only_but(writable: &[CString; 2]) -> io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 1;
    const MOUNT_ATTR_NOSUID: u64 = 2;
    const MOUNT_ATTR_NODEV: u64 = 4;
    const MOUNT_ATTR_NOEXEC: u64 = 8;
    let root = c"/";
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: mount/mount_setattr with NUL-terminated paths and a struct
    // on the stack, in the child's own mount namespace.
    unsafe {
        check(libc::mount(
            none,
            root.as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for dir in writable {
            check(libc::mount(
                dir.as_ptr(),
                dir.as_ptr(),
                none,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
        }
        let set = |path: &std::ffi::CStr, attr: &MountAttr| {
            libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                path.as_ptr(),
                libc::AT_RECURSIVE as libc::c_uint,
                attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        };
        let read_only = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        if set(root, &read_only) != 0 {
            return Err(io::Error::last_os_error());
        }
        let writable_again = MountAttr {
            attr_set: MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            attr_clr: MOUNT_ATTR_RDONLY,
            propagation: 0,
            userns_fd: 0,
        };
        for dir in writable {
            if set(dir, &writable_again) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Mount a `/proc` of the calling process's PID namespace over the old
/// one (which shows every process of the host), and let Landlock read it:
/// the ruleset, made before the fork, names the old `/proc`. `read` is the
/// access the ruleset gives the old one. `Ok(false)` where the kernel
/// refuses the mount (a `/proc` partly hidden by a container runtime): the
/// old one stays, and this namespace cannot name its pids anyway.
///
/// # Safety
/// Plain system calls; only in the namespace's init, after `unshare`
/// and before the ruleset is enforced.
pub(crate) unsafe fn fresh_proc(ruleset: libc::c_int, read: u64) -> io::Result<bool> {
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    let proc_ = c"/proc";
    // SAFETY: mount/open/landlock_add_rule with NUL-terminated strings and
    // a struct on the stack.
    unsafe {
        let mounted = libc::mount(
            c"proc".as_ptr(),
            proc_.as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        );
        if mounted != 0 {
            return Ok(false);
        }
        if ruleset < 0 {
            return Ok(true);
        }
        let fd = libc::open(proc_.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY);
        check(fd)?;
        let rule = PathBeneath {
            allowed_access: read,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &raw const rule,
            0u32,
        );
        let err = io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(err);
        }
    }
    Ok(true)
}
