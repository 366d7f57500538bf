//! `bmk kit k8s`: the manifest is a valid `batch/v1` Job by the Kubernetes API types
//! (`k8s-openapi`), with the properties a distributed run depends on, and is printed
//! exactly as the golden file shows.

use bmk_kit::k8s::{
    manifest, K8sJob, CONFIG_KEY, CONFIG_MOUNT, IMAGE_NAME, IMAGE_USER, PASSWORD_ENV, RESULTS_MOUNT,
};
use k8s_openapi::api::batch::v1::Job;
use serde_json::Value;

fn job() -> K8sJob {
    K8sJob {
        scenario: "OLTP_RO_10M_8tab-uniform-ps-trx".into(),
        users: 64,
        seconds: 300,
        clients: 4,
        job: "bmk-ro-64u".into(),
        image: "registry.example/bmk:0.1.0".into(),
        secret: "bmk-db".into(),
        secret_key: "password".into(),
        results_claim: "bmk-results".into(),
        cpu: "4".into(),
        memory: "4Gi".into(),
        barrier_timeout: 600,
        passed: vec![
            "--mysql-host=db.example".into(),
            "--mysql-user=bench".into(),
        ],
    }
}

/// The manifest as the API types read it; every field survives the round trip, so
/// none is misspelt or misplaced (the types would drop it).
fn typed(value: &Value) -> Job {
    let job: Job = serde_json::from_value(value.clone()).expect("a batch/v1 Job");
    let back = serde_json::to_value(&job).unwrap();
    assert_eq!(&back, value, "fields the API types do not know");
    job
}

#[test]
fn the_manifest_is_an_indexed_job_of_n_pods_that_are_never_replaced() {
    let value = manifest(&job()).unwrap();
    let job = typed(&value);
    let spec = job.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, Some(4));
    assert_eq!(spec.parallelism, Some(4));
    assert_eq!(spec.backoff_limit, Some(0));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));

    // Clients land on different nodes: a required anti-affinity against the pods of
    // this Job, per node.
    let labels = spec.template.metadata.unwrap().labels.unwrap();
    let anti = pod.affinity.unwrap().pod_anti_affinity.unwrap();
    let terms = anti
        .required_during_scheduling_ignored_during_execution
        .unwrap();
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0].topology_key, "kubernetes.io/hostname");
    let selector = terms[0]
        .label_selector
        .clone()
        .unwrap()
        .match_labels
        .unwrap();
    for (k, v) in &selector {
        assert_eq!(labels.get(k), Some(v), "the selector must match the pods");
    }

    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some("registry.example/bmk:0.1.0"));
    let res = c.resources.clone().unwrap();
    assert_eq!(res.requests, res.limits, "requests = limits (Guaranteed)");
    assert_eq!(res.limits.unwrap()["cpu"].0, "4");

    // The password: a reference to the user's Secret, substituted by the kubelet.
    let env = c.env.clone().unwrap();
    let from = env[0].value_from.clone().unwrap().secret_key_ref.unwrap();
    assert_eq!(env[0].name, PASSWORD_ENV);
    assert_eq!(
        (from.name.as_str(), from.key.as_str()),
        ("bmk-db", "password")
    );
    assert!(env[0].value.is_none());
    let args = c.args.clone().unwrap();
    assert!(args.contains(&format!("--mysql-password=$({PASSWORD_ENV})")));

    // Every pod passes the same barrier and writes its own file on the shared claim.
    for a in [
        "--barrier=bmk-ro-64u",
        "--clients=4",
        "--barrier-timeout=600",
        "--threads=64",
        "--time=300",
        "--mysql-host=db.example",
    ] {
        assert!(args.iter().any(|x| x == a), "{a} missing from {args:?}");
    }
    assert_eq!(args.first().map(String::as_str), Some("oltp_read_only"));
    assert_eq!(args.last().map(String::as_str), Some("run"));
    let results =
        format!("--results={RESULTS_MOUNT}/bmk-ro-64u/index-$(JOB_COMPLETION_INDEX).json");
    assert!(args.contains(&results), "{args:?}");
    let mount = &c.volume_mounts.clone().unwrap()[0];
    assert_eq!(mount.mount_path, RESULTS_MOUNT);
    let volume = &pod.volumes.unwrap()[0];
    assert_eq!(volume.name, mount.name);
    assert_eq!(
        volume.persistent_volume_claim.clone().unwrap().claim_name,
        "bmk-results"
    );
}

/// The pods write their results as the image's user: the volume is given its group.
#[test]
fn the_pods_can_write_the_results_volume_as_the_images_user() {
    let job = typed(&manifest(&job()).unwrap());
    let pod = job.spec.unwrap().template.spec.unwrap();
    let security = pod.security_context.unwrap();
    assert_eq!(security.fs_group, Some(i64::from(IMAGE_USER)));
}

/// The default image and its user are what the repository's recipe builds: the name
/// `dist/container-image` tags, the `USER` of `Containerfile`, the owner of the results
/// folder and home that `dist/image-rootfs` makes.
#[test]
fn the_default_image_is_the_one_the_recipe_builds() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let read = |f: &str| std::fs::read_to_string(format!("{root}/{f}")).unwrap();
    assert!(
        read("dist/container-image").contains(&format!("\nimage={IMAGE_NAME}:$version\n")),
        "dist/container-image does not tag {IMAGE_NAME}:VERSION"
    );
    assert!(read("Containerfile").contains(&format!("\nUSER {IMAGE_USER}:{IMAGE_USER}\n")));
    assert!(read("dist/image-rootfs").contains(&format!("\nuid={IMAGE_USER}\n")));
}

#[test]
fn the_manifest_is_printed_as_the_golden_file_shows() {
    let text = serde_json::to_string_pretty(&manifest(&job()).unwrap()).unwrap() + "\n";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/k8s/oltp-ro-4-clients.json"
    );
    if std::env::var_os("BMK_BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file (BMK_BLESS=1 writes it)");
    assert_eq!(text, golden);
}

#[test]
fn a_password_on_the_command_line_is_refused() {
    for given in ["--mysql-password=hunter2", "--pgsql_password=hunter2"] {
        let mut j = job();
        j.passed.push(given.into());
        let e = manifest(&j).unwrap_err().to_string();
        assert!(
            e.contains("the password goes in the Secret 'bmk-db'"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
    }
}

#[test]
fn what_a_pod_cannot_use_is_refused() {
    let cases: [(&str, Vec<&str>, &str); 5] = [
        ("Prepare_10M_8tab-InnoDB", vec![], "is a prepare scenario"),
        (
            "OLTP_RO_10M_8tab-uniform-ps-trx-socket",
            vec![],
            "UNIX socket",
        ),
        (
            "OLTP_RO_10M_8tab-uniform-ps-trx",
            vec!["--target=maria"],
            "--target cannot be passed",
        ),
        (
            "OLTP_RO_10M_8tab-uniform-ps-trx",
            vec!["--db-driver=sqlite"],
            "MySQL/MariaDB or PostgreSQL",
        ),
        ("NOPE", vec![], "NOPE"),
    ];
    for (scenario, passed, message) in cases {
        let mut j = job();
        j.scenario = scenario.into();
        j.passed = passed.into_iter().map(String::from).collect();
        let e = manifest(&j).unwrap_err().to_string();
        assert!(e.contains(message), "{scenario}: {e}");
    }
    let mut j = job();
    j.job = "Bad_Name".into();
    let e = manifest(&j).unwrap_err().to_string();
    assert!(e.contains("is not a Kubernetes name"), "{e}");
}

#[test]
fn a_postgresql_run_takes_the_pgsql_password() {
    let mut j = job();
    j.passed = vec!["--db-driver=pgsql".into(), "--pgsql-host=pg".into()];
    let value = manifest(&j).unwrap();
    let args = typed(&value)
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .containers[0]
        .args
        .clone()
        .unwrap();
    assert!(args.contains(&format!("--pgsql-password=$({PASSWORD_ENV})")));
}

/// The committed config file the ConfigMap test embeds.
const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/k8s/oltp-ro.cfg");

/// A `--config-file` of this machine reaches the pods as a ConfigMap mounted in each:
/// the manifest is a List of the ConfigMap (holding the file's text) and the Job, whose
/// pods read the mounted copy.
#[test]
fn a_config_file_is_embedded_as_a_config_map_mounted_in_every_pod() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let mut j = job();
    j.passed.push(format!("--config-file={CONFIG}"));
    let value = manifest(&j).unwrap();
    assert_eq!(value["apiVersion"], "v1");
    assert_eq!(value["kind"], "List");
    let items = value["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let map: ConfigMap = serde_json::from_value(items[0].clone()).expect("a v1 ConfigMap");
    assert_eq!(serde_json::to_value(&map).unwrap(), items[0]);
    assert_eq!(map.metadata.name.as_deref(), Some("bmk-ro-64u-config"));
    let data = map.data.unwrap();
    assert_eq!(data[CONFIG_KEY], std::fs::read_to_string(CONFIG).unwrap());

    let pod = typed(&items[1]).spec.unwrap().template.spec.unwrap();
    let c = &pod.containers[0];
    let args = c.args.clone().unwrap();
    assert!(
        args.contains(&format!("--config-file={CONFIG_MOUNT}/{CONFIG_KEY}")),
        "{args:?}"
    );
    assert!(!args.iter().any(|a| a.contains(CONFIG)), "{args:?}");
    let mount = c
        .volume_mounts
        .clone()
        .unwrap()
        .into_iter()
        .find(|m| m.mount_path == CONFIG_MOUNT)
        .expect("the config volume is mounted");
    assert_eq!(mount.read_only, Some(true));
    let volume = pod
        .volumes
        .unwrap()
        .into_iter()
        .find(|v| v.name == mount.name)
        .unwrap();
    assert_eq!(
        volume.config_map.unwrap().name,
        "bmk-ro-64u-config".to_string()
    );

    let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/k8s/oltp-ro-4-clients-config-file.json"
    );
    if std::env::var_os("BMK_BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file (BMK_BLESS=1 writes it)");
    assert_eq!(text, golden);
}

/// A config file that sets a password, or one that is not a regular file, is refused.
#[test]
fn a_config_file_with_a_password_or_no_end_is_refused() {
    let dir = std::env::temp_dir().join(format!("bmk-k8s-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("pw.cfg");
    std::fs::write(&cfg, "report-interval=1\nmysql-password=hunter2\n").unwrap();
    let mut j = job();
    j.passed.push(format!("--config-file={}", cfg.display()));
    let e = manifest(&j).unwrap_err().to_string();
    assert!(
        e.contains("line 2: --mysql-password: the password goes in the Secret 'bmk-db'"),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
    let mut j = job();
    j.passed.push("--config-file=/dev/zero".into());
    let e = manifest(&j).unwrap_err().to_string();
    assert_eq!(
        e,
        "--config-file: cannot read '/dev/zero': a character device, not a regular file"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn metrics_are_served_on_the_pod_address_with_scrape_annotations() {
    let mut j = job();
    j.passed.push("--metrics-addr=9464".into());
    let value = manifest(&j).unwrap();
    let job = typed(&value);
    let template = job.spec.unwrap().template;
    let annotations = template.metadata.unwrap().annotations.unwrap();
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/port"], "9464");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
    let container = &template.spec.unwrap().containers[0];
    let ports = container.ports.as_ref().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].container_port, 9464);
    assert_eq!(ports[0].name.as_deref(), Some("metrics"));
    let args = container.args.as_ref().unwrap();
    assert!(
        args.contains(&"--metrics-addr=0.0.0.0:9464".to_string()),
        "a bare port listens on the pod's address: {args:?}"
    );

    // A host given stays as given; no --metrics-addr, no port and no annotations.
    let mut j2 = self::job();
    j2.passed.push("--metrics-addr=10.0.0.7:9500".into());
    let text = manifest(&j2).unwrap().to_string();
    assert!(
        text.contains("--metrics-addr=10.0.0.7:9500") && text.contains("\"containerPort\":9500"),
        "{text}"
    );
    let plain = manifest(&self::job()).unwrap().to_string();
    assert!(
        !plain.contains("prometheus.io") && !plain.contains("containerPort"),
        "{plain}"
    );

    let mut bad = self::job();
    bad.passed.push("--metrics-addr=host:port".into());
    let e = manifest(&bad).unwrap_err().to_string();
    assert!(e.contains("--metrics-addr 'host:port'"), "{e}");
}
