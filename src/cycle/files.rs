//! How phase 5 writes its files. The JSON artifacts the state machine
//! reads back are written with `store::write_atomic` (temp file, fsync,
//! rename, fsync of the directory: DESIGN.md §3; the loop pays the fsyncs
//! of each step together at its state commit, see `store::SyncBatch`),
//! but only when their content changed. Markdown views (TODO list, summaries, reports) and the
//! `test-results.json` mirror of `iteration-N-results.json` are derived
//! from those artifacts: they are replaced atomically (temp file + rename,
//! so a `kill -9` never leaves half a file) without the fsyncs, which
//! dominate the loop's own time on slow disks.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::session::store;

fn unchanged(path: &Path, bytes: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|old| old == bytes)
}

/// `store::write_json`, skipped when the file already holds this text.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let bytes = store::json_bytes(value)?;
    if unchanged(path, &bytes) {
        return Ok(());
    }
    store::write_atomic(path, &bytes)
}

/// A derived view: atomic replace without fsync, skipped when unchanged.
pub fn write_view(path: &Path, bytes: &[u8]) -> Result<()> {
    if unchanged(path, bytes) {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::session::store::create_dirs(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// A JSON view (see [`write_view`]).
pub fn write_json_view<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_view(path, &store::json_bytes(value)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn views_replace_atomically_and_skip_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("TODO_LIST.md");
        write_view(&p, b"one").unwrap();
        let before = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_view(&p, b"one").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
        write_view(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temp file left: {names:?}");
        write_json(&dir.path().join("a.json"), &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.json")).unwrap(),
            "{\n  \"a\": 1\n}\n"
        );
    }
}
