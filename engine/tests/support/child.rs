//! The SIGKILL side of the crash tortures, shared by the engine's (`engine/tests/engine/
//! crash.rs`) and the structures' (`structures/tests/crash.rs`, through `#[path]`): the
//! parent starts this same test binary as a child that commits in a loop and reports
//! on stdout ("ready", then "ack N" per acknowledged commit), waits until it is ready,
//! kills it mid-work, and learns the last commit it acknowledged.

use rand::Rng;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The child's command line: this test binary running the ignored test `child_test`
/// on the database at `path` with `seed`.
pub fn exe_args(child_test: &str, path: &Path, seed: u64) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", child_test, "--nocapture", "--test-threads=1"])
        .env("QUIRE_CRASH_DB", path)
        .env("QUIRE_CRASH_SEED", seed.to_string());
    command
}

/// [`exe_args`] for the child of kill number `kill`, with `QUIRE_CRASH_LOG` set so that
/// a third of the children log their commits and a third also group-commit them
/// ([`child_options`]): kills then strike log appends, checkpoints and replays too.
pub fn exe_args_for_kill(child_test: &str, path: &Path, seed: u64, kill: usize) -> Command {
    let mut command = exe_args(child_test, path, seed);
    command.env("QUIRE_CRASH_LOG", (kill % 3).to_string());
    command
}

/// The child's options: `base` with the commit-log mode its parent chose
/// (`QUIRE_CRASH_LOG`: 0 no log, 1 a 64-page commit log, 2 the same with group commit).
pub fn child_options(base: quiredb_engine::Options) -> quiredb_engine::Options {
    let mode = std::env::var("QUIRE_CRASH_LOG").ok().and_then(|value| value.parse::<u8>().ok()).unwrap_or(0);
    let builder = quiredb_engine::DatabaseBuilder::from(base);
    builder.commit_log_pages(if mode > 0 { 64 } else { 0 }).group_commit(mode == 2).into_options()
}

/// Starts the child, waits until it has opened the database and is committing
/// ("ready"), lets it work for a random time in `pause` (µs), checks it is still alive
/// and SIGKILLs it. Returns the last commit it acknowledged. The child's stderr is kept
/// in a file and shown if it dies on its own.
pub fn kill_mid_work(
    command: &mut Command,
    dir: &Path,
    kill: usize,
    rng: &mut impl Rng,
    pause: std::ops::Range<u64>,
) -> Option<u64> {
    let stderr_path = dir.join(format!("child-{kill}.stderr"));
    let stderr_file = std::fs::File::create(&stderr_path).unwrap();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::from(stderr_file)).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = || std::fs::read_to_string(&stderr_path).unwrap_or_default();
    // The test harness prints its own lines first, and "test child ... " without an
    // end of line, so "ready" ends the line it is on.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match received.recv_timeout(left) {
            Ok(line) if line.ends_with("ready") => break,
            Ok(_) => {}
            Err(error) => panic!("kill {kill}: the child did not get ready ({error}):\n{}", stderr()),
        }
    }
    std::thread::sleep(Duration::from_micros(rng.random_range(pause)));
    // The child must be killed mid-work: one that exited by itself proves nothing.
    assert!(child.try_wait().unwrap().is_none(), "kill {kill}: the child exited early:\n{}", stderr());
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let _ = std::fs::remove_file(&stderr_path);
    received.try_iter().filter_map(|line| line.strip_prefix("ack ").and_then(|n| n.parse::<u64>().ok())).last()
}

/// Writes a line to the parent and flushes it at once (stdout to a pipe is block
/// buffered: an acknowledgement still in the buffer dies with the child unseen).
pub fn tell(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).expect("the parent reads the child's stdout");
}
