//! The supervising half of `quire-fuzz run`: the input loop runs in a worker process
//! (this binary with `--worker-index-file`), so an abort (the allocation guard, a stack
//! overflow) or a hang ends only the worker, as AFL's fork server would. The worker
//! writes the index of each input to the index file before running it; when it dies,
//! the supervisor regenerates that input, saves it as a finding, prints the worker's
//! last stderr lines, and starts the next worker after it. A worker that finishes
//! leaves the next index in the file; its exit code says whether it found something new.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quiredb_fuzz::Target;

use super::{RunArgs, fail};

/// Lines of a dead worker's stderr kept for its report.
const STDERR_LINES_KEPT: usize = 80;

/// Runs `args` through workers until the inputs or the time are used up.
pub fn supervise(target: Target, args: &RunArgs, known: &[String], corpus: &[Vec<u8>]) -> i32 {
    let clock = Instant::now();
    let end = args.inputs.map(|inputs| args.start.saturating_add(inputs));
    let index_file = args.findings.join(format!(".{}-s{}-{}.index", target.name(), args.seed, std::process::id()));
    std::fs::create_dir_all(&args.findings)
        .unwrap_or_else(|error| fail(&format!("{}: {error}", args.findings.display())));
    let (mut next, mut workers, mut failed) = (args.start, 0u64, false);
    loop {
        let inputs = end.map(|end| end.saturating_sub(next));
        let seconds = args.seconds.map(|seconds| seconds.saturating_sub(clock.elapsed().as_secs()));
        if inputs == Some(0) || seconds == Some(0) {
            break;
        }
        workers += 1;
        let _ = std::fs::remove_file(&index_file);
        let (status, stderr) = run_worker(args, &index_file, next, inputs, seconds);
        let Some(at) = read_index(&index_file) else {
            fail(&format!("a worker ended ({status}) before running an input; see its messages above"))
        };
        if status.code() == Some(2) {
            fail("a worker refused its arguments");
        }
        if status.code().is_some_and(|code| code == 0 || code == 1) {
            failed |= status.code() == Some(1);
            next = at;
            break;
        }
        failed |= !record_crash(target, args, known, corpus, at, status, &stderr);
        next = at + 1;
    }
    let _ = std::fs::remove_file(&index_file);
    println!(
        "supervised {}: inputs {}..{next} ({} inputs) in {:.1} s, seed {}, {workers} worker(s), {}",
        target.name(),
        args.start,
        next - args.start,
        clock.elapsed().as_secs_f64(),
        args.seed,
        if failed { "FAILED: new findings" } else { "no new findings" }
    );
    i32::from(failed)
}

/// Runs one worker over `inputs` inputs from `start`; returns its exit status and the
/// last lines of its stderr (which it also forwards).
fn run_worker(
    args: &RunArgs,
    index_file: &PathBuf,
    start: u64,
    inputs: Option<u64>,
    seconds: Option<u64>,
) -> (ExitStatus, Vec<String>) {
    let exe = std::env::current_exe().unwrap_or_else(|error| fail(&format!("finding this executable: {error}")));
    let mut command = Command::new(exe);
    command.arg("run").arg(&args.target).arg("--seed").arg(args.seed.to_string());
    command.arg("--start").arg(start.to_string()).arg("--findings").arg(&args.findings);
    command.arg("--hang-seconds").arg(args.hang_seconds.to_string()).arg("--worker-index-file").arg(index_file);
    if let Some(inputs) = inputs {
        command.arg("--inputs").arg(inputs.to_string());
    }
    if let Some(seconds) = seconds {
        command.arg("--seconds").arg(seconds.to_string());
    }
    for dir in &args.corpus {
        command.arg("--corpus").arg(dir);
    }
    if let Some(known) = &args.known {
        command.arg("--known").arg(known);
    }
    let mut child =
        command.stderr(Stdio::piped()).spawn().unwrap_or_else(|error| fail(&format!("starting a worker: {error}")));
    let kept = Arc::new(Mutex::new(VecDeque::new()));
    let stderr = child.stderr.take().expect("stderr was piped");
    let forward = {
        let kept = kept.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(std::io::stderr(), "{line}");
                let mut kept = kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if kept.len() == STDERR_LINES_KEPT {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        })
    };
    let status = child.wait().unwrap_or_else(|error| fail(&format!("waiting for a worker: {error}")));
    let _ = forward.join();
    let lines = std::mem::take(&mut *kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    (status, lines.into())
}

fn read_index(file: &PathBuf) -> Option<u64> {
    let bytes = std::fs::read(file).ok()?;
    Some(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?))
}

/// Saves the input that ended a worker and reports it; true when it is a known finding.
fn record_crash(
    target: Target,
    args: &RunArgs,
    known: &[String],
    corpus: &[Vec<u8>],
    index: u64,
    status: ExitStatus,
    stderr: &[String],
) -> bool {
    let kind = if status.code() == Some(3) { "hang" } else { "abort" };
    let file = args.findings.join(format!("{}-s{}-i{index}-{kind}.bin", target.name(), args.seed));
    let input = target.input(args.seed, index, corpus);
    let saved = std::fs::write(&file, input).map_or_else(|error| format!("not saved: {error}"), |()| "saved".into());
    let report = stderr.join("\n");
    let is_known = known.iter().any(|text| report.contains(text.as_str()));
    println!(
        "FINDING ({kind}{}): {} input #{index} of seed {} ended its worker ({status}); {saved} to {}",
        if is_known { ", known" } else { "" },
        target.name(),
        args.seed,
        file.display()
    );
    is_known
}
