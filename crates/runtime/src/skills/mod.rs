//! Skills: folders of instructions in the open `SKILL.md` format (a folder
//! per skill; `SKILL.md` opens with `name` and `description` front matter;
//! any files beside it). An agent's come from `skills_dir` in its
//! workspace, then the shared `[skills].dirs`; the first of a name wins.
//!
//! A request carries only each skill's name and a short description (see
//! `listing`); the `skill` tool reads a body, or a file beside it, when the
//! model asks — so a hundred skills cost one short list. Everything is read
//! from the skills folder's own descriptor one name at a time, no link
//! followed (`beneath`), on a thread the kernel confines to that folder;
//! a scan reads at most `MAX_SKILLS` skills (docs/skills.md).

mod beneath;
mod front_matter;
mod listing;

use beneath::Kind;
pub use listing::prompt_section;
use std::path::{Path, PathBuf};
use switchboard_sandbox::fs::{Access, confined_blocking};

/// The largest `SKILL.md` read whole (by the `skill` tool).
pub(crate) const MAX_SKILL_BYTES: u64 = 256 * 1024;
/// What a scan reads of each `SKILL.md`: its front matter must end within it.
const FRONT_MATTER_BYTES: u64 = 8 * 1024;
/// Skills read per scan (the rest are a problem `check` reports).
pub(crate) const MAX_SKILLS: usize = 200;
/// Entries `files_beside` looks at, and how deep.
const MAX_VISITED: usize = 1000;
const MAX_DEPTH: usize = 4;

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
    /// That folder's (device, inode) when it was read: a folder swapped
    /// since is not read.
    pub root_id: (u64, u64),
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
pub fn roots(
    config: &switchboard_config::Config,
    agent: &switchboard_config::AgentConfig,
    workspace: &Path,
) -> Vec<PathBuf> {
    let mut roots = vec![workspace.join(&agent.skills_dir)];
    roots.extend(config.skills.dirs.iter().map(PathBuf::from));
    roots
}

/// Read the skills in `roots` (a missing folder has none).
pub fn scan(roots: &[PathBuf]) -> Skills {
    let mut all = Skills::default();
    for root in roots {
        if std::fs::symlink_metadata(root).is_err() {
            continue;
        }
        let folder = root.clone();
        let found = confined_blocking(root, Access::Read, move || scan_root(&folder));
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
                problem: format!("the folder could not be read ({e}); a skills folder must be a folder, not a link"),
            }),
        }
    }
    all.found.sort_by(|a, b| a.name.cmp(&b.name));
    if all.found.len() > MAX_SKILLS {
        let left = all.found.split_off(MAX_SKILLS);
        all.problems.push(SkillProblem {
            path: left[0].dir.clone(),
            problem: format!(
                "more than {MAX_SKILLS} skills: {} left out, from {} on",
                left.len(),
                left[0].name
            ),
        });
    }
    all
}

/// Every skill folder in `root` (on the confined thread).
fn scan_root(root: &Path) -> std::io::Result<Vec<Result<Skill, SkillProblem>>> {
    let (dir, root_id) = beneath::open_dir(root)?;
    let mut out = Vec::new();
    for (name, kind) in beneath::entries(&dir)? {
        if kind != Kind::Folder || name.starts_with('.') {
            continue;
        }
        if out.len() > MAX_SKILLS {
            break;
        }
        let path = root.join(&name).join("SKILL.md");
        let text = match beneath::read_text(&dir, &Path::new(&name).join("SKILL.md"), FRONT_MATTER_BYTES) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                out.push(Err(SkillProblem {
                    path,
                    problem: format!("cannot be read ({e}); it must be a file, not a link"),
                }));
                continue;
            }
        };
        out.push(skill_of(&text, path, root, root_id));
    }
    Ok(out)
}

fn skill_of(text: &str, path: PathBuf, root: &Path, root_id: (u64, u64)) -> Result<Skill, SkillProblem> {
    let problem = |problem: String| SkillProblem {
        path: path.clone(),
        problem,
    };
    let (values, _) = front_matter::parse(text).map_err(|why| match text.len() as u64 >= FRONT_MATTER_BYTES {
        true => problem(format!(
            "{why} (it must end within the first {} KB)",
            FRONT_MATTER_BYTES / 1024
        )),
        false => problem(why),
    })?;
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
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Skill {
        name,
        description: listing::plain(&description),
        dir,
        root: root.to_path_buf(),
        root_id,
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

/// The skills folder of `skill`, if it is still the one it was read from.
fn reopen(skill: &Skill) -> std::io::Result<std::os::fd::OwnedFd> {
    let (dir, id) = beneath::open_dir(&skill.root)?;
    if id != skill.root_id {
        return Err(std::io::Error::other(
            "the skills folder changed since this turn began; ask again next turn",
        ));
    }
    Ok(dir)
}

/// The folder name of `skill` under its root.
fn folder(skill: &Skill) -> PathBuf {
    PathBuf::from(skill.dir.file_name().unwrap_or_default())
}

/// The body of `skill`'s `SKILL.md` (after the front matter) and the files
/// beside it (on a thread confined to its skills folder).
pub(crate) async fn body(skill: &Skill) -> std::io::Result<(String, Vec<String>)> {
    let skill = skill.clone();
    switchboard_sandbox::fs::confined(&skill.root.clone(), Access::Read, move || {
        let root = reopen(&skill)?;
        let text = beneath::read_text(&root, &folder(&skill).join("SKILL.md"), MAX_SKILL_BYTES)?;
        let body = front_matter::parse(&text).map(|(_, b)| b.to_string()).unwrap_or(text);
        let here = beneath::open_under(&root, &folder(&skill), true)?;
        Ok((body, files_beside(&here)))
    })
    .await
}

/// At most `limit` bytes of the file `rel` of `skill` (relative to its
/// folder; no `..`, no link).
pub(crate) async fn file(skill: &Skill, rel: &str, limit: u64) -> std::io::Result<String> {
    let (skill, rel) = (skill.clone(), PathBuf::from(rel));
    switchboard_sandbox::fs::confined(&skill.root.clone(), Access::Read, move || {
        let root = reopen(&skill)?;
        beneath::read_text(&root, &folder(&skill).join(rel), limit)
    })
    .await
}

/// The regular files under `dir` (not `SKILL.md`; links not followed; at
/// most 100 named, `MAX_VISITED` looked at, `MAX_DEPTH` deep).
fn files_beside(dir: &std::os::fd::OwnedFd) -> Vec<String> {
    let mut out = Vec::new();
    let mut visited = 0;
    let mut pending: Vec<(PathBuf, usize)> = vec![(PathBuf::new(), 0)];
    while let Some((rel, depth)) = pending.pop() {
        let opened = if rel.as_os_str().is_empty() {
            dir.try_clone()
        } else {
            beneath::open_under(dir, &rel, true)
        };
        let Ok(entries) = opened.and_then(|d| beneath::entries(&d)) else {
            continue;
        };
        for (name, kind) in entries {
            visited += 1;
            if visited > MAX_VISITED {
                return out;
            }
            let path = rel.join(&name);
            match kind {
                Kind::Folder if depth + 1 < MAX_DEPTH => pending.push((path, depth + 1)),
                Kind::File if path != Path::new("SKILL.md") && out.len() < 100 => {
                    out.push(path.to_string_lossy().into_owned());
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
