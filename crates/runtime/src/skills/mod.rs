//! Skills: folders of instructions in the open `SKILL.md` format (a folder
//! per skill; `SKILL.md` opens with `name` and `description` front matter;
//! any files beside it). An agent's come from `skills_dir` in its
//! workspace, then the shared `[skills].dirs`; the first of a name wins.
//!
//! A request carries only each skill's name and a short description (see
//! `listing`); the `skill` tool reads a body, or a file beside it, when the
//! model asks — so a hundred skills cost one short list. Everything is read
//! on a thread the kernel confines to the skills folder, and a link is never
//! followed (docs/skills.md).

mod front_matter;
mod listing;

pub use listing::prompt_section;
use std::io::Read;
use std::path::{Path, PathBuf};
use switchboard_sandbox::fs::{Access, confined_blocking, open_regular};

/// The largest `SKILL.md` read.
pub(crate) const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// One skill found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its `name` (lowercase letters, digits and hyphens).
    pub name: String,
    /// Its `description`: what it is for and when to use it.
    pub description: String,
    /// Its folder.
    pub dir: PathBuf,
    /// The skills folder it was found in (reads are confined to it).
    pub root: PathBuf,
}

/// A `SKILL.md` that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The file or folder.
    pub path: PathBuf,
    /// What is wrong and what to change.
    pub problem: String,
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    /// Usable skills, sorted by name.
    pub found: Vec<Skill>,
    /// Skills left out.
    pub problems: Vec<SkillProblem>,
}

impl Skills {
    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.found.iter().find(|s| s.name == name)
    }
}

/// The folders `agent`'s skills come from: its `skills_dir` in
/// `workspace`, then the shared ones.
pub fn roots(config: &switchboard_config::Config, agent: &str, workspace: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(cfg) = config.agents.get(agent) {
        roots.push(workspace.join(&cfg.skills_dir));
    }
    roots.extend(config.skills.dirs.iter().map(PathBuf::from));
    roots
}

/// Read the skills in `roots` (a missing folder has none).
pub fn scan(roots: &[PathBuf]) -> Skills {
    let mut all = Skills::default();
    for root in roots {
        match std::fs::symlink_metadata(root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                all.problems.push(SkillProblem {
                    path: root.clone(),
                    problem: "a skills folder must be a folder, not a link or a file".into(),
                });
                continue;
            }
            Err(_) => continue,
        }
        let folder = root.clone();
        let found = confined_blocking(root, Access::Read, move || Ok(scan_root(&folder)));
        match found {
            Ok(found) => {
                for item in found {
                    match item {
                        Ok(skill) if all.get(&skill.name).is_none() => all.found.push(skill),
                        Ok(_) => {}
                        Err(problem) => all.problems.push(problem),
                    }
                }
            }
            Err(e) => all.problems.push(SkillProblem {
                path: root.clone(),
                problem: format!("the folder could not be read: {e}"),
            }),
        }
    }
    all.found.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

/// Every skill folder in `root` (on the confined thread).
fn scan_root(root: &Path) -> Vec<Result<Skill, SkillProblem>> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter(|d| d.join("SKILL.md").symlink_metadata().is_ok())
        .map(|dir| read_skill(root, &dir))
        .collect()
}

fn read_skill(root: &Path, dir: &Path) -> Result<Skill, SkillProblem> {
    let path = dir.join("SKILL.md");
    let problem = |problem: String| SkillProblem {
        path: path.clone(),
        problem,
    };
    let text = read_text(&path, MAX_SKILL_BYTES).map_err(|e| problem(format!("cannot be read: {e}")))?;
    let (values, _) = front_matter::parse(&text).map_err(problem)?;
    let name = values.get("name").cloned().unwrap_or_default();
    let description = values.get("description").cloned().unwrap_or_default();
    if let Err(why) = check_name(&name) {
        return Err(problem(why));
    }
    if description.trim().is_empty() {
        return Err(problem(
            "`description:` is missing: say what the skill is for and when to use it".into(),
        ));
    }
    if description.chars().count() > 1024 {
        return Err(problem("`description:` is over 1024 characters: shorten it".into()));
    }
    Ok(Skill {
        name,
        description: description.split_whitespace().collect::<Vec<_>>().join(" "),
        dir: dir.to_path_buf(),
        root: root.to_path_buf(),
    })
}

/// A skill name: 1 to 64 lowercase letters, digits and single hyphens.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if name.is_empty() {
        Err("`name:` is missing: give the skill a name (lowercase letters, digits, hyphens)".into())
    } else if ok {
        Ok(())
    } else {
        Err(format!(
            "`name: {name}` is not a skill name: use up to 64 lowercase letters, digits and single hyphens"
        ))
    }
}

/// A text file that is a regular file (no link followed), at most `limit`
/// bytes.
pub(crate) fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    let file = open_regular(path, std::fs::OpenOptions::new().read(true))?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The body of `skill`'s `SKILL.md` (after the front matter) and the files
/// beside it (on a thread confined to its skills folder).
pub(crate) async fn body(skill: &Skill) -> std::io::Result<(String, Vec<String>)> {
    let dir = skill.dir.clone();
    switchboard_sandbox::fs::confined(&skill.root, Access::Read, move || {
        let text = read_text(&dir.join("SKILL.md"), MAX_SKILL_BYTES)?;
        let body = front_matter::parse(&text).map(|(_, b)| b.to_string()).unwrap_or(text);
        Ok((body, files_beside(&dir)))
    })
    .await
}

/// The files in `dir` and its folders (not `SKILL.md`; links not followed;
/// at most 100), relative to it.
fn files_beside(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            let path = e.path();
            if t.is_dir() {
                pending.push(path);
            } else if t.is_file() && path != dir.join("SKILL.md") && out.len() < 100 {
                out.push(path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
