//! A program in a real pseudo-terminal, as a person runs it: what the
//! terminal shows is collected while it runs, keys can be typed (Enter,
//! Ctrl-C) and the exit code is read at the end.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::Env;

pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    shown: Arc<Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Pty {
    /// Start `program args` with `env`'s hermetic environment (and the real
    /// toolchains) in the project root.
    pub fn spawn(env: &Env, program: &Path, args: &[&str], vars: &[(&str, &str)]) -> Pty {
        let mut std_cmd = Command::new(program);
        env.apply(&mut std_cmd);
        env.apply_toolchains(&mut std_cmd);
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.env_clear();
        for (k, v) in std_cmd.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        // What a terminal emulator sets (without it the spinner stays hidden).
        cmd.env("TERM", "xterm-256color");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.cwd(&env.root);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let child = pair.slave.spawn_command(cmd).expect("spawns");
        drop(pair.slave);
        let shown = Arc::new(Mutex::new(Vec::new()));
        let sink = shown.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the last holder of the terminal is gone: the end.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            master: pair.master,
            writer,
            child,
            shown,
            reader,
        }
    }

    /// Everything the terminal received so far.
    pub fn shown(&self) -> String {
        String::from_utf8_lossy(&self.shown.lock().unwrap()).into_owned()
    }

    /// Wait until `text` has been shown `times` times in all; panics with
    /// what was shown after `limit`.
    pub fn wait_for(&self, text: &str, times: usize, limit: Duration) -> String {
        let started = Instant::now();
        loop {
            let shown = self.shown();
            if shown.matches(text).count() >= times {
                return shown;
            }
            assert!(
                started.elapsed() < limit,
                "{text:?} not shown {times} time(s) within {limit:?}:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Type `keys` (`"\r"`: Enter, `"\x03"`: Ctrl-C).
    pub fn type_keys(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Wait for the program to end (at most `limit`): its exit code and
    /// everything the terminal received.
    pub fn finish(mut self, limit: Duration) -> (u32, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("still running after {limit:?}:\n{}", self.shown());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        drop(self.writer);
        drop(self.master);
        self.reader.join().unwrap();
        let shown = String::from_utf8_lossy(&self.shown.lock().unwrap()).into_owned();
        (status.exit_code(), shown)
    }
}

/// Run `program args` in a pseudo-terminal to its end: the exit code and
/// everything the terminal received.
pub fn run(env: &Env, program: &Path, args: &[&str], vars: &[(&str, &str)]) -> (u32, String) {
    Pty::spawn(env, program, args, vars).finish(Duration::from_secs(600))
}
