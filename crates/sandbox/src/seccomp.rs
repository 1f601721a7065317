//! A seccomp filter for confined programs: the system calls Landlock and
//! the namespaces do not cover.
//!
//! * `socket(AF_UNIX, …)` is refused: Landlock (before ABI 9) does not
//!   mediate `connect` on path-named sockets, and a socket such as the
//!   system D-Bus, Docker's or a database's would let a command act
//!   outside its box. (`socketpair` stays: it reaches nothing outside.)
//! * With `network = "none"` every `socket` is refused, so UDP and raw
//!   sockets are closed too even where no network namespace can be made.
//! * io_uring (which can open sockets and files around this filter),
//!   eBPF, perf events, userfaultfd, kernel keyrings, inotify/fanotify
//!   (watching folders outside the workspace), modules, kexec, reboot and
//!   swap are refused.
//! * `memfd_create` is refused: a memory file is a file no mount's
//!   `noexec` covers, and its bytes can be mapped as code even with
//!   `MFD_NOEXEC_SEAL` (which only stops `execve`), so a loader could run
//!   workspace bytes through it.
//! * Where the program has no PID namespace of its own (the second line
//!   behind it), the calls that act on another process by pid are refused
//!   unless they name the caller itself (pid 0): `prlimit64`,
//!   `setpriority` (and any but `PRIO_PROCESS`), the scheduler's setters,
//!   `ioprio_set`, `migrate_pages`, `move_pages`; `process_vm_readv`/
//!   `writev`, `pidfd_open`, `pidfd_getfd` and `kcmp` are refused, and
//!   `ptrace` allows only `PTRACE_TRACEME`.
//! * System calls of another architecture (32-bit entry points) end the
//!   process.

use libc::{sock_filter, sock_fprog};

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// Refused with EPERM (see the module doc).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const DENIED: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    // aarch64 has only the newer inotify_init1.
    #[cfg(target_arch = "x86_64")]
    libc::SYS_inotify_init,
    libc::SYS_inotify_init1,
    libc::SYS_fanotify_init,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_open_by_handle_at,
    libc::SYS_memfd_create,
];

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jeq(k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn ret(k: u32) -> sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, k)
}

fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

/// Load the low half of argument `i` (the whole of an `int`; both
/// architectures are little-endian).
fn load_arg(i: u32) -> sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 16 + 8 * i)
}

/// Refused outright where there is no PID namespace.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const OTHER_PROCESS: &[libc::c_long] = &[
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
];

/// Allowed only when these arguments hold these values (the caller
/// itself), where there is no PID namespace: `(call, [(arg, value)])`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SELF_ONLY: &[(libc::c_long, &[(u32, u32)])] = &[
    (libc::SYS_prlimit64, &[(0, 0)]),
    (libc::SYS_setpriority, &[(0, libc::PRIO_PROCESS), (1, 0)]),
    (libc::SYS_sched_setaffinity, &[(0, 0)]),
    (libc::SYS_sched_setattr, &[(0, 0)]),
    (libc::SYS_sched_setparam, &[(0, 0)]),
    (libc::SYS_sched_setscheduler, &[(0, 0)]),
    // IOPRIO_WHO_PROCESS, who = 0.
    (libc::SYS_ioprio_set, &[(0, 1), (1, 0)]),
    (libc::SYS_migrate_pages, &[(0, 0)]),
    (libc::SYS_move_pages, &[(0, 0)]),
    (libc::SYS_ptrace, &[(0, libc::PTRACE_TRACEME)]),
];

/// For system call `nr`: allow it only when every `(arg, value)` holds,
/// else refuse with EPERM. The block returns either way.
fn only_when(f: &mut Vec<sock_filter>, nr: libc::c_long, conds: &[(u32, u32)]) {
    let n = conds.len();
    f.push(jeq(nr as u32, 0, (2 * n + 2) as u8));
    for (i, &(arg, value)) in conds.iter().enumerate() {
        f.push(load_arg(arg));
        // On a mismatch, jump to the refusal past the remaining checks.
        f.push(jeq(value, 0, (2 * (n - i - 1) + 1) as u8));
    }
    f.push(ret(libc::SECCOMP_RET_ALLOW));
    f.push(ret(errno(libc::EPERM)));
}

/// The filter program; with `no_sockets`, every `socket` call is refused;
/// without `pid_namespace`, calls naming another process are too.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) fn filter(no_sockets: bool, pid_namespace: bool) -> Vec<sock_filter> {
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    // struct seccomp_data { int nr; __u32 arch; __u64 ip; __u64 args[6]; }
    let mut f = vec![
        stmt(load, 4),
        jeq(ARCH, 1, 0),
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        stmt(load, 0),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls (numbers with bit 30 set) share the architecture tag.
        f.push(sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        });
        f.push(ret(libc::SECCOMP_RET_KILL_PROCESS));
    }
    let refused = DENIED.iter().chain(if pid_namespace { &[][..] } else { OTHER_PROCESS });
    for &nr in refused {
        f.push(jeq(nr as u32, 0, 1));
        f.push(ret(errno(libc::EPERM)));
    }
    if !pid_namespace {
        for &(nr, conds) in SELF_ONLY {
            only_when(&mut f, nr, conds);
        }
    }
    if no_sockets {
        f.push(jeq(libc::SYS_socket as u32, 0, 1));
        f.push(ret(errno(libc::EACCES)));
    } else {
        f.push(jeq(libc::SYS_socket as u32, 0, 3));
        // args[0], the domain (low half, little-endian).
        f.push(stmt(load, 16));
        f.push(jeq(libc::AF_UNIX as u32, 0, 1));
        f.push(ret(errno(libc::EACCES)));
    }
    f.push(ret(libc::SECCOMP_RET_ALLOW));
    f
}

/// No filter where the architecture is not one we wrote it for.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) fn filter(_no_sockets: bool, _pid_namespace: bool) -> Vec<sock_filter> {
    Vec::new()
}

/// Install `program` on the calling thread (after `no_new_privs`).
///
/// # Safety
/// A plain system call on memory prepared before the fork.
pub(crate) unsafe fn install(program: &[sock_filter]) -> std::io::Result<()> {
    if program.is_empty() {
        return Ok(());
    }
    let prog = sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points at `program`, alive for the call.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const sock_fprog,
        )
    };
    if r != 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}
