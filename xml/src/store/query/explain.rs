//! `--explain`: a plan printed as an indented tree, one operator a line, with the
//! rows and time its [`Stats`](super::plan::Stats) gathered over the runs so far.
//!
//! Read next: `plan.rs` (what is printed).

use super::plan::{Axis, Plan, Pred, StepPlan};
use std::fmt::Write as _;

impl Plan {
    /// The plan as an indented tree, with each operator's rows and time from the
    /// runs so far.
    pub fn explain(&self, names: &[String]) -> String {
        let mut out = String::new();
        if self.branches.len() > 1 {
            out.push_str("union (merge in document order)\n");
        }
        let indent = usize::from(self.branches.len() > 1);
        for branch in &self.branches {
            explain_steps(&mut out, branch, indent, names);
        }
        out
    }
}

fn explain_steps(out: &mut String, steps: &[StepPlan], indent: usize, names: &[String]) {
    for step in steps {
        let parts: Vec<String> = step
            .source
            .parts
            .iter()
            .map(|p| {
                let name = names.get(p.name as usize).map_or("", String::as_str);
                let filter = if p.filtered { " (path-filtered)" } else { "" };
                format!("{} {name}{filter}", p.kind.name())
            })
            .collect();
        let how = if step.axis == Axis::Itself {
            "the context".to_string()
        } else if step.scan {
            format!("scan of {}", parts.join(", "))
        } else {
            format!("structural join with {}", parts.join(", "))
        };
        let _ = writeln!(
            out,
            "{:indent$}{} — {how}; {} paths, {} nodes in them; {}",
            "",
            step.text,
            step.source.paths.members().len(),
            step.source.count,
            step.stats.text(),
            indent = indent * 2
        );
        for p in &step.predicates {
            explain_pred(out, p, indent + 1, names);
        }
    }
}

fn explain_pred(out: &mut String, pred: &Pred, indent: usize, names: &[String]) {
    let pad = indent * 2;
    match pred {
        Pred::Const(b) => {
            let _ = writeln!(out, "{:pad$}[{b} — decided from the path summary]", "");
        }
        Pred::And(list) | Pred::Or(list) => {
            let word = if matches!(pred, Pred::And(_)) { "and" } else { "or" };
            let _ = writeln!(out, "{:pad$}[{word}]", "");
            list.iter().for_each(|p| explain_pred(out, p, indent + 1, names));
        }
        Pred::Not(inner) => {
            let _ = writeln!(out, "{:pad$}[not]", "");
            explain_pred(out, inner, indent + 1, names);
        }
        Pred::Path { steps, compare, stats } => {
            let cmp = match compare {
                None => "exists".to_string(),
                Some(c) => {
                    let how = if c.indexed.is_some() { "value index or values" } else { "values" };
                    format!("compare {:?} {} by {how}", c.op, c.literal)
                }
            };
            let _ = writeln!(out, "{:pad$}[semi-join: {cmp}; {}]", "", stats.text());
            explain_steps(out, steps, indent + 1, names);
        }
    }
}
