//! The command line as a Unix filter: output into a pipe whose reader is gone
//! (`wirespeed list | head -1` after `head` exits) ends the process quietly, by
//! SIGPIPE, instead of a panic on the broken pipe.

#![cfg(unix)]

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

#[test]
fn a_closed_output_pipe_ends_the_process_quietly() {
    for args in [&["list"][..], &["gen", "--help"][..]] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        // The reader is gone before the first write: that write meets a broken pipe.
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("the wirespeed binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {:?}, stderr: {stderr}",
            out.status
        );
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
