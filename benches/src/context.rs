//! The context every measurement carries: the commit the binary was built from (by
//! `build.rs`), CPU model, cores, memory, kernel and date, read once per run from
//! /proc.

use serde::{Deserialize, Serialize};
use std::process::Command;

/// The machine and revision a run was made on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub commit: String,
    pub cpu: String,
    pub cores: usize,
    pub mem: String,
    pub kernel: String,
    pub date: String,
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn proc_field(file: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

impl Machine {
    /// Reads the current machine; fields that cannot be read say "unknown".
    pub fn detect() -> Machine {
        let unknown = || "unknown".to_string();
        Machine {
            commit: env!("QUIRE_BUILD_COMMIT").to_string(),
            cpu: proc_field("/proc/cpuinfo", "model name").unwrap_or_else(unknown),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mem: proc_field("/proc/meminfo", "MemTotal").unwrap_or_else(unknown),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| unknown()),
            date: command_output("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]).unwrap_or_else(unknown),
        }
    }

    /// The day part of the date, for result file names.
    pub fn day(&self) -> &str {
        self.date.get(..10).unwrap_or("undated")
    }
}
