//! `fslab k8s`: the printed manifests are valid Kubernetes objects — each document
//! deserialises into the k8s-openapi type of its kind (a batch/v1 Job, a v1 ConfigMap)
//! and serialises back to the same object (so no field was misspelt and dropped).

use crate::common::text;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(doc: &serde_json::Value) -> T {
    let typed: T = serde_json::from_value(doc.clone()).expect("deserialises");
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(&back, doc, "a field did not survive the round trip");
    typed
}

#[test]
fn the_manifests_are_an_indexed_job_and_a_merge_job() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fslab"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "k8s",
            "smallfiles",
            "--shards",
            "2",
            "--image",
            "example.org/fslab:1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let yaml = String::from_utf8(o.stdout).unwrap();
    let mut jobs: Vec<Job> = Vec::new();
    let mut configs: Vec<ConfigMap> = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&yaml) {
        let v: serde_json::Value = serde::Deserialize::deserialize(doc).unwrap();
        if v.is_null() {
            continue;
        }
        match (v["apiVersion"].as_str(), v["kind"].as_str()) {
            (Some("batch/v1"), Some("Job")) => jobs.push(roundtrip(&v)),
            (Some("v1"), Some("ConfigMap")) => configs.push(roundtrip(&v)),
            other => panic!("unexpected document {other:?}:\n{v}"),
        }
    }
    assert_eq!((jobs.len(), configs.len()), (2, 1), "{yaml}");
    let exp = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/smallfiles.yaml"),
    )
    .unwrap();
    let data = configs[0].data.as_ref().unwrap();
    assert_eq!(data.get("smallfiles.yaml"), Some(&exp));

    let shards = &jobs[0];
    let spec = shards.spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, Some(2));
    assert_eq!(spec.parallelism, Some(2));
    let pod = spec.template.spec.as_ref().unwrap();
    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some("example.org/fslab:1"));
    assert_eq!(
        c.security_context.as_ref().and_then(|s| s.privileged),
        Some(true)
    );
    let cmd = c.command.as_ref().unwrap().join(" ");
    assert!(
        cmd.contains("--shard \"$((JOB_COMPLETION_INDEX + 1))/2\""),
        "{cmd}"
    );
    assert!(cmd.contains("/experiment/smallfiles.yaml"), "{cmd}");
    // The volume the experiment is read from is the ConfigMap.
    let cm_name = configs[0].metadata.name.clone().unwrap();
    assert!(pod
        .volumes
        .as_ref()
        .unwrap()
        .iter()
        .any(|v| v.config_map.as_ref().is_some_and(|c| c.name == cm_name)));

    let merge = jobs[1].spec.as_ref().unwrap();
    assert_eq!(merge.completion_mode, None);
    let c = &merge.template.spec.as_ref().unwrap().containers[0];
    let cmd = c.command.as_ref().unwrap().join(" ");
    assert!(cmd.contains("fslab merge /results/shards/"), "{cmd}");
    assert!(cmd.contains("-merged"), "{cmd}");
}

#[test]
fn more_shards_than_points_is_refused() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fslab"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["k8s", "smallfiles", "--shards", "3"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("only 2 points") && e.contains("--shards 2"),
        "{e}"
    );
}
