//! A compaction summary stands in for the messages it replaces, on SQLite
//! and PostgreSQL: the history starts with it, later messages follow in
//! order, `/new` clears it, and nothing is deleted.

use switchboard_store::Store;

mod support;

on_both_backends!(compaction, compaction_on);

async fn compaction_on(url: &str) {
    let store = Store::open(url).await.unwrap();
    let s = store.sessions();
    s.ensure("k", "main", None, None, None).await.unwrap();
    for i in 0..6 {
        s.append("k", "user", &format!("{{\"role\":\"user\",\"content\":\"m{i}\"}}"))
            .await
            .unwrap();
    }
    let before = s.history("k", 100).await.unwrap();
    assert_eq!(before.len(), 6);
    let upto = before[3].id;
    assert!(
        s.compact("k", upto, "{\"role\":\"summary\",\"content\":\"m0 to m3\"}")
            .await
            .unwrap()
    );
    // One that read the history before and goes less far is refused.
    assert!(
        !s.compact("k", before[1].id, "{\"role\":\"summary\",\"content\":\"m0 to m1\"}")
            .await
            .unwrap()
    );
    s.append("k", "user", "{\"role\":\"user\",\"content\":\"m6\"}")
        .await
        .unwrap();
    let after = s.history("k", 100).await.unwrap();
    let bodies: Vec<&str> = after.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(bodies, ["summary", "user", "user", "user"]);
    assert!(after[0].body.contains("m0 to m3"));
    assert!(after[1].body.contains("m4") && after[3].body.contains("m6"));
    // A limit keeps the summary and the newest messages.
    let two = s.history("k", 2).await.unwrap();
    assert_eq!(two[0].role, "summary");
    assert!(two[1].body.contains("m6"));
    // A second compaction replaces the first summary.
    assert!(
        s.compact("k", after[2].id, "{\"role\":\"summary\",\"content\":\"m0 to m5\"}")
            .await
            .unwrap()
    );
    let again = s.history("k", 100).await.unwrap();
    assert_eq!(again.len(), 2);
    assert!(again[0].body.contains("m0 to m5") && again[1].body.contains("m6"));
    // The full transcript still has every message and both notes.
    let all = s.transcript("k", 100).await.unwrap();
    assert_eq!(all.iter().filter(|m| m.role == "summary").count(), 2);
    assert_eq!(all.iter().filter(|m| m.role == "user").count(), 7);
    // /new starts afresh without the summary.
    s.reset("k").await.unwrap();
    assert!(s.history("k", 100).await.unwrap().is_empty());
    // A compaction that started before /new stores nothing after it.
    let old_cut = all.last().unwrap().id - 1;
    assert!(
        !s.compact("k", old_cut, "{\"role\":\"summary\",\"content\":\"late\"}")
            .await
            .unwrap()
    );
    assert!(s.history("k", 100).await.unwrap().is_empty(), "no summary after /new");
    s.append("k", "user", "{\"role\":\"user\",\"content\":\"new\"}")
        .await
        .unwrap();
    let fresh = s.history("k", 100).await.unwrap();
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0].role, "user");
}
