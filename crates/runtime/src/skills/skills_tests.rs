use super::*;

fn write_skill(root: &Path, folder: &str, front: &str) {
    std::fs::create_dir_all(root.join(folder)).unwrap();
    std::fs::write(
        root.join(folder).join("SKILL.md"),
        format!("---\n{front}\n---\nDo the steps.\n"),
    )
    .unwrap();
}

#[test]
fn skills_are_found_sorted_and_the_first_root_wins() {
    let own = tempfile::tempdir().unwrap();
    let shared = tempfile::tempdir().unwrap();
    write_skill(own.path(), "b", "name: brew\ndescription: Make tea.");
    write_skill(shared.path(), "a", "name: alpha\ndescription: First.");
    write_skill(shared.path(), "b2", "name: brew\ndescription: Make coffee.");
    let skills = scan(&[own.path().to_path_buf(), shared.path().to_path_buf()]);
    let names: Vec<_> = skills
        .found
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(names, [("alpha", "First."), ("brew", "Make tea.")]);
    assert!(skills.problems.is_empty());
}

#[test]
fn malformed_front_matter_is_a_problem_that_says_what_to_change() {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "x", "name: Bad Name\ndescription: d");
    write_skill(root.path(), "y", "name: ok");
    std::fs::create_dir_all(root.path().join("z")).unwrap();
    std::fs::write(root.path().join("z/SKILL.md"), "no front matter").unwrap();
    let skills = scan(&[root.path().to_path_buf()]);
    assert!(skills.found.is_empty());
    let problems: Vec<_> = skills.problems.iter().map(|p| p.problem.as_str()).collect();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("is not a skill name"));
    assert!(problems[1].contains("`description:` is missing"));
    assert!(problems[2].contains("must start with front matter"));
}

#[test]
fn a_linked_skill_file_or_folder_is_not_read() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_skill(outside.path(), "evil", "name: evil\ndescription: Outside.");
    std::os::unix::fs::symlink(outside.path().join("evil"), root.path().join("evil")).unwrap();
    std::fs::create_dir_all(root.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("evil/SKILL.md"),
        root.path().join("linked/SKILL.md"),
    )
    .unwrap();
    let skills = scan(&[root.path().to_path_buf()]);
    assert!(skills.found.is_empty(), "{:?}", skills.found);
    assert_eq!(
        skills.problems.len(),
        1,
        "the linked SKILL.md is refused: {:?}",
        skills.problems
    );
}

#[test]
fn a_hundred_skills_make_a_short_list() {
    let skills: Vec<Skill> = (0..100)
        .map(|i| Skill {
            name: format!("skill-{i:03}"),
            description: "Converts measurements between metric and imperial units, with rounding rules.".into(),
            dir: PathBuf::new(),
            root: PathBuf::new(),
        })
        .collect();
    let list = prompt_section(&skills).unwrap();
    assert!(list.len() < 3300, "{} bytes", list.len());
    assert!(list.contains("- skill-099"), "every name is listed");
    let ten = prompt_section(&skills[..10]).unwrap();
    assert!(
        ten.contains("with rounding rules."),
        "ten skills keep their whole description"
    );
    assert_eq!(prompt_section(&[]), None);
}
