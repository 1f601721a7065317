//! The gateway raises its own open-file limit at start: a burst of people
//! holds a model connection and a platform connection each. This file is
//! its own test process, so lowering the limit here touches no other test.

#[cfg(target_os = "linux")]
#[test]
fn the_open_file_limit_is_raised_to_the_hard_limit() {
    let read = || {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one plain struct that outlives the call.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) }, 0);
        l
    };
    let before = read();
    assert!(before.rlim_max > 256, "this machine's hard limit is too low to test");
    let lowered = libc::rlimit {
        rlim_cur: 256,
        rlim_max: before.rlim_max,
    };
    // SAFETY: setrlimit reads one plain struct that outlives the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lowered) }, 0);

    switchboard_runtime::process::raise_open_file_limit();

    let after = read();
    assert_eq!(after.rlim_cur, before.rlim_max.min(65_536));
    assert_eq!(after.rlim_max, before.rlim_max, "the hard limit is never changed");
}
