//! Skill folder checks (docs/skills.md).

use crate::Problem;
use std::path::{Component, Path};

/// `agents.<a>.skills_dir`: one folder name directly in the workspace (a
/// path with more parts could pass through a link the agent made).
pub(super) fn skills_dir(at: &str, dir: &str, v: &mut Vec<Problem>) {
    let one_name = matches!(
        Path::new(dir).components().collect::<Vec<_>>().as_slice(),
        [Component::Normal(_)]
    );
    if !one_name {
        v.push(Problem::new(
            at,
            "must be the name of a folder directly in the agent's workspace (no '/' or '..'); list folders elsewhere in [skills].dirs",
        ));
    }
}
