//! Output files a failed write leaves behind: removed when they are regular files,
//! so that a run that fails leaves no incomplete trace or capture, and left alone
//! when they are anything else (a device such as `/dev/full`, a pipe, a link).

use std::path::Path;

/// Removes `path` if it is a regular file (not followed through a link); whether
/// it was removed.
pub fn remove_incomplete(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) && std::fs::remove_file(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("part.vcd");
        std::fs::write(&file, b"$date").unwrap();
        assert!(remove_incomplete(&file));
        assert!(!file.exists());
        assert!(!remove_incomplete(&file), "already gone");
        #[cfg(unix)]
        {
            let target = dir.path().join("target");
            std::fs::write(&target, b"kept").unwrap();
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            assert!(!remove_incomplete(&link));
            assert!(link.is_symlink() && target.is_file());
        }
        #[cfg(target_os = "linux")]
        {
            assert!(!remove_incomplete(Path::new("/dev/full")));
            assert!(Path::new("/dev/full").exists());
        }
        assert!(!remove_incomplete(dir.path()), "a folder");
    }
}
