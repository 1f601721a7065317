//! Skills (docs/skills.md) through `switchboard run`: the model is offered
//! only the skills' names and short descriptions, reads a body with the
//! `skill` tool when it wants it, and nothing outside a skill's folder is
//! read, whatever links the folder holds. `/skills` lists them, `check`
//! names a malformed one, and a hundred skills stay a short list.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::{Gateway, team_gateway};
use switchboard_test_support::{Step, tool_results};

fn write_skill(root: &Path, folder: &str, front: &str, body: &str) {
    std::fs::create_dir_all(root.join(folder)).unwrap();
    std::fs::write(root.join(folder).join("SKILL.md"), format!("---\n{front}\n---\n{body}")).unwrap();
}

/// Ask in chat `chat` and wait for the answer.
async fn ask(gw: &Gateway, chat: &str, text: &str) -> String {
    gw.ask("team", chat, "cli:ann", text, 30).await
}

/// The `skill` tool offered in `request`, if any.
fn skill_tool(request: &Value) -> Option<Value> {
    request["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == "skill")
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_is_listed_by_name_read_on_demand_and_never_outside_its_folder() {
    // Supervised, as shipped: reading skills is approved ahead.
    let profile = "[risk_profiles.default]\nlevel = \"supervised\"\nauto_approve = [\"skill\"]\n";
    let (model, sandbox, gw) = team_gateway(profile, "streaming = \"off\"\n").await;
    let skills = sandbox.path().join("workspace/main/skills");
    write_skill(
        &skills,
        "brew",
        "name: brew\ndescription: Make tea the way the team likes it.",
        "Boil the water to 95 C, then steep for three minutes.\n",
    );
    std::fs::write(skills.join("brew/recipe.txt"), "two spoons of leaves").unwrap();
    // What a prompt-injected agent could leave in its own workspace: a
    // file beside the skill and a whole skill that are links outside it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "THE-SECRET").unwrap();
    write_skill(
        outside.path(),
        "evil",
        "name: evil\ndescription: Outside.",
        "THE-SECRET\n",
    );
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), skills.join("brew/leak.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("evil"), skills.join("evil")).unwrap();

    model.push(Step::tool_call("skill", json!({"name": "brew"})));
    model.push(Step::tool_call("skill", json!({"name": "brew", "file": "leak.txt"})));
    model.push(Step::tool_call(
        "skill",
        json!({"name": "brew", "file": "../../../../etc/hostname"}),
    ));
    model.push(Step::tool_call("skill", json!({"name": "evil"})));
    model.push(Step::text("Steeped."));
    assert_eq!(ask(&gw, "dm-1", "make tea").await, "Steeped.");

    let requests = model.requests();
    let first = &requests[0];
    let tool = skill_tool(first).expect("an agent with skills is offered `skill`");
    let description = tool["function"]["description"].as_str().unwrap();
    assert!(
        description.contains("- brew: Make tea the way the team likes it."),
        "{description}"
    );
    let whole = first.to_string();
    assert!(!whole.contains("Boil the water"), "bodies are not sent until asked for");
    assert!(
        !whole.contains("evil") && !whole.contains("THE-SECRET"),
        "a linked skill is not listed"
    );

    let results = tool_results(&requests[4]);
    assert!(results[0].contains("Boil the water to 95 C"), "{results:?}");
    assert!(
        results[0].contains("recipe.txt"),
        "the files beside it are named: {results:?}"
    );
    assert!(
        !results[0].contains("leak.txt"),
        "a link is not a file of the skill: {results:?}"
    );
    assert!(
        results[1].contains("'leak.txt' is not a file inside the skill 'brew'"),
        "{results:?}"
    );
    assert!(
        results[2].contains("is not a file inside the skill 'brew'"),
        "{results:?}"
    );
    assert!(results[3].contains("no skill is named 'evil'"), "{results:?}");
    assert!(results.iter().all(|r| !r.contains("THE-SECRET")), "{results:?}");

    let listed = ask(&gw, "dm-2", "/skills").await;
    assert_eq!(listed, "Skills of main:\n- brew — Make tea the way the team likes it.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_skills_are_a_short_list_and_check_names_a_malformed_one() {
    let (model, sandbox, gw) = team_gateway("", "streaming = \"off\"\n").await;
    let skills = sandbox.path().join("workspace/main/skills");
    let mut sizes = Vec::new();
    for (n, chat) in [(0, "dm-0"), (10, "dm-10"), (100, "dm-100")] {
        for i in 0..n {
            write_skill(
                &skills,
                &format!("skill-{i:03}"),
                &format!(
                    "name: skill-{i:03}\ndescription: Convert measurements between metric and imperial units ({i})."
                ),
                "Steps.\n",
            );
        }
        model.push(Step::text("ok"));
        assert_eq!(ask(&gw, chat, "hello").await, "ok");
        let request = model.requests().last().cloned().unwrap();
        assert_eq!(
            skill_tool(&request).is_some(),
            n > 0,
            "`skill` is offered only with skills"
        );
        sizes.push((n, request.to_string().len()));
    }
    println!("skills  request bytes  added");
    for (n, size) in &sizes {
        println!("{n:>6}  {size:>13}  {:>5}", size - sizes[0].1);
    }
    let added = sizes[2].1 - sizes[0].1;
    assert!(added < 4096, "100 skills added {added} bytes to the request");

    write_skill(&skills, "broken", "name: Broken Skill\ndescription: d", "x\n");
    let (code, out, err) = sandbox.run(&["check", "--config", "switchboard.toml"]);
    assert_eq!(
        code, 0,
        "a malformed skill is a warning, not a broken config: {out}{err}"
    );
    assert!(
        out.contains("broken/SKILL.md: `name: Broken Skill` is not a skill name"),
        "{out}"
    );
    assert!(out.contains("100 skill(s)"), "{out}");
}
