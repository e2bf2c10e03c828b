//! The file a child's output is streamed into: whole, or kept to a size
//! cap — its first `head` bytes and its last `tail` bytes with a marker
//! where the middle was dropped — so an agent that prints gigabytes fills
//! neither wfx's memory nor the disk (docs/hardening.md).
//!
//! The capped file is kept in place while it is written: once it holds
//! `tail` bytes more than the cap allows, its last `tail` bytes are moved
//! up behind the head (in 64 KiB pieces) and the file is cut there, so it
//! never grows past `head + tail` by more than `tail` and every byte is
//! copied at most once more.

use std::fs::File;
use std::io::Result;
use std::os::unix::fs::FileExt;

/// How much of an output a capped log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimit {
    /// Bytes kept from the start.
    pub head: u64,
    /// Bytes kept from the end.
    pub tail: u64,
}

/// The cap on an agent's (or a shell step's) log: its first 16 MiB and
/// its last 48 MiB. The end holds the agent's answer (the envelope of
/// claude's and gemini's JSON output comes last) and what it did last.
pub const AGENT_LOG: LogLimit = LogLimit {
    head: 16 << 20,
    tail: 48 << 20,
};

/// Room kept between head and tail for the omission marker (padded).
const MARKER: u64 = 160;

/// The marker text for `omitted` bytes, padded with spaces to exactly
/// [`MARKER`] bytes, starting and ending with a newline.
fn marker(omitted: u64, limit: LogLimit) -> Vec<u8> {
    let size = |n: u64| {
        if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
            format!("{} MiB", n >> 20)
        } else {
            format!("{n} bytes")
        }
    };
    let text = format!(
        "\n[… wfx omitted {omitted} bytes of output here: its logs keep the first {} and the last {} …]",
        size(limit.head),
        size(limit.tail)
    );
    let mut end = text.len().min(MARKER as usize - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut bytes = text.as_bytes()[..end].to_vec();
    bytes.resize(MARKER as usize - 1, b' ');
    bytes.push(b'\n');
    bytes
}

/// Output appended to a log file, capped by `limit` when there is one.
pub struct LogWriter {
    file: File,
    limit: Option<LogLimit>,
    /// Bytes in the file now.
    len: u64,
    /// What the file would hold without a cap.
    logical: u64,
}

impl LogWriter {
    /// `file` is open for reading and writing; what it holds already is
    /// kept (as the start of the log).
    pub fn new(file: File, limit: Option<LogLimit>) -> Result<LogWriter> {
        let len = file.metadata()?.len();
        Ok(LogWriter {
            file,
            limit,
            len,
            logical: len,
        })
    }

    pub fn write(&mut self, chunk: &[u8]) -> Result<()> {
        self.file.write_all_at(chunk, self.len)?;
        self.len += chunk.len() as u64;
        self.logical += chunk.len() as u64;
        if let Some(limit) = self.limit
            && self.len > limit.head + MARKER + 2 * limit.tail
        {
            self.keep_tail(limit)?;
        }
        Ok(())
    }

    /// Cut the log to the cap for good and write the marker.
    pub fn finish(mut self) -> Result<()> {
        if let Some(limit) = self.limit
            && self.len > limit.head + MARKER + limit.tail
        {
            self.keep_tail(limit)?;
        }
        Ok(())
    }

    /// Move the last `tail` bytes up behind the head and the marker, cut
    /// the file there, and write the marker.
    fn keep_tail(&mut self, limit: LogLimit) -> Result<()> {
        let to = limit.head + MARKER;
        let from = self.len - limit.tail;
        let mut buf = vec![0u8; 64 * 1024];
        let mut done = 0u64;
        // `to < from`: copying upwards piece by piece never overwrites
        // what is still to be read.
        while done < limit.tail {
            let n = buf.len().min((limit.tail - done) as usize);
            self.file.read_exact_at(&mut buf[..n], from + done)?;
            self.file.write_all_at(&buf[..n], to + done)?;
            done += n as u64;
        }
        self.len = to + limit.tail;
        self.file.set_len(self.len)?;
        let omitted = self.logical - limit.head - limit.tail;
        self.file.write_all_at(&marker(omitted, limit), limit.head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit() -> LogLimit {
        LogLimit {
            head: 10,
            tail: 300,
        }
    }

    /// A writer to a new file `log` in `dir`.
    fn writer(dir: &tempfile::TempDir, limit: Option<LogLimit>) -> LogWriter {
        let file = crate::fsx::read_write(&dir.path().join("log")).unwrap();
        LogWriter::new(file, limit).unwrap()
    }

    fn written(chunks: &[&[u8]], limit: Option<LogLimit>) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut w = writer(&dir, limit);
        for c in chunks {
            w.write(c).unwrap();
        }
        w.finish().unwrap();
        std::fs::read(&path).unwrap()
    }

    #[test]
    fn an_output_under_the_cap_is_kept_whole() {
        let out: Vec<u8> = (0..400u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(written(&[&out[..200], &out[200..]], Some(limit())), out);
        assert_eq!(written(&[&out], None), out);
    }

    #[test]
    fn a_long_output_keeps_head_marker_and_tail() {
        let out: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for piece in [1usize, 7, 64, 333, 5000] {
            let chunks: Vec<&[u8]> = out.chunks(piece).collect();
            let log = written(&chunks, Some(limit()));
            assert_eq!(log.len() as u64, 10 + MARKER + 300, "piece {piece}");
            assert_eq!(&log[..10], &out[..10]);
            assert_eq!(&log[log.len() - 300..], &out[out.len() - 300..]);
            let marker = String::from_utf8_lossy(&log[10..10 + MARKER as usize]);
            assert!(
                marker.starts_with("\n[… wfx omitted 4690 bytes of output here"),
                "{marker}"
            );
            assert!(marker.ends_with(" \n"), "{marker:?}");
        }
    }

    #[test]
    fn the_file_never_grows_past_the_cap_by_more_than_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut w = writer(&dir, Some(limit()));
        for _ in 0..1000 {
            w.write(b"0123456789").unwrap();
            let len = std::fs::metadata(&path).unwrap().len();
            assert!(len <= 10 + MARKER + 2 * 300, "{len}");
        }
    }
}
