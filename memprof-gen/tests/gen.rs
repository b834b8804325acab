//! The generator's command line. (Besides testing it, this integration test
//! makes `cargo test` build the `memprof-gen` executable, which memprof's own
//! tests run.)

use assert_cmd::Command;

#[test]
fn the_same_arguments_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lp.pb");
    let run = || {
        let out = Command::cargo_bin("memprof-gen")
            .unwrap()
            .args([
                "lp",
                "--constraints",
                "20",
                "--terms",
                "3",
                "--variables",
                "30",
            ])
            .arg("-o")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&path).unwrap()
    };
    let first = run();
    assert!(!first.is_empty());
    assert_eq!(first, run());
}
