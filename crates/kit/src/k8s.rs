//! `bmk kit k8s NAME USERS SECONDS --clients N [options]`: a Kubernetes manifest (JSON,
//! which `kubectl apply -f` takes) that runs scenario NAME from N client pods at once.
//!
//! The manifest is one Indexed Job:
//! * `completionMode: Indexed`, `parallelism = completions = N`: N pods run together,
//!   pod K has `JOB_COMPLETION_INDEX=K`, which bmk takes as its barrier identity
//!   `index-K`, so a missing pod is named.
//! * `backoffLimit: 0` and `restartPolicy: Never`: a pod that fails is not replaced —
//!   an Indexed Job would give the replacement the same index, and a replacement must
//!   never join a run that has started (the barrier refuses it anyway).
//! * a required pod anti-affinity on `kubernetes.io/hostname`: two clients never share a
//!   node, so one node's CPU or network does not cap two clients.
//! * resource requests equal to the limits: the Guaranteed class, so clients are not
//!   squeezed by neighbours halfway through a run.
//! * every pod runs `bmk` with the scenario's command line plus `--barrier=JOB
//!   --clients=N`; the password comes from a Secret the user creates (named in the
//!   manifest, never holding the password), through an environment variable that the
//!   kubelet substitutes into the argument.
//! * each pod writes `--results=/results/JOB/index-K.json` on a volume: a
//!   PersistentVolumeClaim the user creates with access mode ReadWriteMany, mounted by
//!   every pod; `bmk merge /results/JOB/*.json` combines them.
//! * a `--config-file=PATH` given to the kit names a file on this machine, which the
//!   pods do not have: its text is embedded in a ConfigMap (`JOB-config`, key
//!   [`CONFIG_KEY`]) mounted read-only at [`CONFIG_MOUNT`] in every pod, and the pods
//!   are given that path instead. The manifest is then a `v1` `List` of the ConfigMap
//!   and the Job. A config file that sets a password is refused, as a passed password
//!   option is.
//! * `--metrics-addr=[HOST:]PORT` passed on: each pod serves its live metrics on the
//!   pod's own address (a bare port becomes `0.0.0.0:PORT`, as loopback would be out of
//!   Prometheus's reach), and the pods get a `metrics` container port and the
//!   `prometheus.io/scrape`, `/port` and `/path` annotations that scrape configs built on
//!   Kubernetes service discovery look for ([`METRICS_PATH`]).

use std::path::Path;

use bmk_engine::bounded_file;
use serde_json::{json, Value};

use crate::catalog::{self, Action, Scenario};
use crate::error::KitError;

/// What `bmk kit k8s` was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct K8sJob {
    /// The scenario's name (`OLTP_RO_10M_8tab-uniform-ps-trx`).
    pub scenario: String,
    /// Users (worker threads) per client.
    pub users: u32,
    /// Measured seconds.
    pub seconds: u64,
    /// Client pods that start together.
    pub clients: u32,
    /// The Job's name, also the barrier's and the results folder's.
    pub job: String,
    /// The container image with `bmk` on its `PATH`.
    pub image: String,
    /// The Secret that holds the database password, and its key.
    pub secret: String,
    /// The key of the password in the Secret.
    pub secret_key: String,
    /// The PersistentVolumeClaim (ReadWriteMany) the results go to.
    pub results_claim: String,
    /// CPU per pod (request = limit), in Kubernetes quantity syntax.
    pub cpu: String,
    /// Memory per pod (request = limit).
    pub memory: String,
    /// Seconds a pod waits for the others at the barrier.
    pub barrier_timeout: u64,
    /// Options passed on to every client (connection options and the like).
    pub passed: Vec<String>,
}

/// The name the repository's `Containerfile` is built as (`dist/container-image`):
/// podman and buildah keep a local image as `localhost/NAME`, and a cluster's nodes
/// find it under that name once it is loaded into them (docs/distributed.md).
pub const IMAGE_NAME: &str = "localhost/bmk";

/// The image a Job runs unless `--image` names another: the one `Containerfile` makes
/// of this version of bmk.
pub fn default_image(version: &str) -> String {
    format!("{IMAGE_NAME}:{version}")
}

/// The non-root user and group that image runs as (`USER` in `Containerfile`). The pods
/// get it as their `fsGroup`, so a results volume the kubelet can re-own is writable to
/// that user.
pub const IMAGE_USER: u32 = 10001;

/// Where the results volume is mounted in each pod.
pub const RESULTS_MOUNT: &str = "/results";

/// The environment variable that carries the password from the Secret.
pub const PASSWORD_ENV: &str = "BMK_DB_PASSWORD";

/// Where an embedded `--config-file` is mounted in each pod.
pub const CONFIG_MOUNT: &str = "/etc/bmk";

/// The ConfigMap key (and file name under [`CONFIG_MOUNT`]) of an embedded config file.
pub const CONFIG_KEY: &str = "bmk.cfg";

/// Where bmk serves its live metrics (`--metrics-addr`).
pub const METRICS_PATH: &str = "/metrics";

/// The label that marks the pods of one Job (for the anti-affinity).
const RUN_LABEL: &str = "bmk.run";

/// A Job name from `scenario`: what Kubernetes takes as a name (lower case letters,
/// digits and `-`, at most 63 characters), unique per `stamp`.
pub fn default_job_name(scenario: &str, users: u32, stamp: &str) -> String {
    let mut base: String = scenario
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let tail = format!("-{users}u-{stamp}");
    base.truncate(63usize.saturating_sub(4 + tail.len()));
    let name = format!("bmk-{}{tail}", base.trim_end_matches('-'));
    name.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn check_dns_label(what: &str, v: &str) -> Result<(), KitError> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(KitError::Usage(format!(
            "{what} '{v}' is not a Kubernetes name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
        )))
    }
}

/// The option name of `--name=value` (or `--name`), `_` read as `-`.
fn option_name(arg: &str) -> Option<String> {
    let body = arg.strip_prefix("--")?;
    Some(body.split('=').next().unwrap_or(body).replace('_', "-"))
}

/// The manifest of `job`, or why it cannot be made.
pub fn manifest(job: &K8sJob) -> Result<Value, KitError> {
    let s = runnable_scenario(job)?;
    let (password_option, config) = check_passed(job)?;
    let metrics_port = metrics_port(job)?;
    let args = pod_args(job, &s, password_option);
    let mut job_value = job_object(job, &s, args, config.is_some());
    if let Some(port) = metrics_port {
        expose_metrics(&mut job_value, port);
    }
    Ok(match config {
        None => job_value,
        Some(text) => json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": { "name": config_map_name(job), "labels": labels(job) },
                    "data": { CONFIG_KEY: text },
                },
                job_value,
            ],
        }),
    })
}

/// The scenario of `job`, when its clients can run in pods, and `job`'s counts and
/// names checked.
fn runnable_scenario(job: &K8sJob) -> Result<Scenario, KitError> {
    let s = catalog::parse(&job.scenario)?;
    if s.action != Action::Run {
        return Err(KitError::Usage(format!(
            "'{}' is a prepare scenario: prepare once with 'bmk kit prepare', then generate the clients of a run scenario",
            s.name
        )));
    }
    if s.socket {
        return Err(KitError::Usage(format!(
            "'{}' connects through a UNIX socket, which a pod does not share with the server: use the TCP variant",
            s.name
        )));
    }
    if job.clients == 0 || job.users == 0 {
        return Err(KitError::Usage("--clients and USERS: at least 1".into()));
    }
    check_dns_label("--job", &job.job)?;
    check_dns_label("--secret", &job.secret)?;
    check_dns_label("--results-claim", &job.results_claim)?;
    Ok(s)
}

/// Checks the options passed to the pods: no password, nothing the manifest sets
/// itself, at most one config file. Returns the driver's password option and the
/// config file's text, if one is given.
fn check_passed(job: &K8sJob) -> Result<(&'static str, Option<String>), KitError> {
    let mut driver = "mysql".to_string();
    let mut config: Option<String> = None;
    for a in &job.passed {
        let Some(name) = option_name(a) else { continue };
        if name == "config-file" {
            if config.is_some() {
                return Err(KitError::Usage(
                    "--config-file: give one config file for the pods".into(),
                ));
            }
            config = Some(embedded_config(a, job)?);
            continue;
        }
        if name.contains("password") || name.contains("secret") {
            return Err(KitError::Usage(format!(
                "--{name}: the password goes in the Secret '{}' (key '{}'), never in the manifest",
                job.secret, job.secret_key
            )));
        }
        if matches!(
            name.as_str(),
            "barrier" | "clients" | "results" | "results-dir" | "target" | "config"
        ) {
            return Err(KitError::Usage(format!(
                "--{name} cannot be passed to the pods: the manifest sets the barrier and the results itself, and a pod has no bmk.toml (give the connection options directly)"
            )));
        }
        if name == "db-driver" {
            driver = a
                .split_once('=')
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
        }
    }
    let password_option = match driver.as_str() {
        "mysql" => "mysql-password",
        "pgsql" => "pgsql-password",
        other => {
            return Err(KitError::Usage(format!(
                "--db-driver={other}: the clients of a Kubernetes run need a MySQL/MariaDB or PostgreSQL server"
            )))
        }
    };
    Ok((password_option, config))
}

/// The arguments of bmk in each pod: the scenario's command line with the passed
/// options, the password from the environment, the barrier and the results file.
fn pod_args(job: &K8sJob, s: &Scenario, password_option: &str) -> Vec<String> {
    let mut passed: Vec<String> = job
        .passed
        .iter()
        .map(|a| match option_name(a).as_deref() {
            // The pods read the file from the ConfigMap's volume.
            Some("config-file") => format!("--config-file={CONFIG_MOUNT}/{CONFIG_KEY}"),
            // A bare port would listen on the pod's loopback, out of Prometheus's reach.
            Some("metrics-addr") => match a.split_once('=').map(|(_, v)| v.trim()) {
                Some(port) if port.parse::<u16>().is_ok() => {
                    format!("--metrics-addr=0.0.0.0:{port}")
                }
                _ => a.clone(),
            },
            _ => a.clone(),
        })
        .collect();
    passed.push(format!("--{password_option}=$({PASSWORD_ENV})"));
    passed.push(format!("--barrier={}", job.job));
    passed.push(format!("--clients={}", job.clients));
    passed.push(format!("--barrier-timeout={}", job.barrier_timeout));
    passed.push(format!(
        "--results={RESULTS_MOUNT}/{}/index-$(JOB_COMPLETION_INDEX).json",
        job.job
    ));
    s.args(job.users, job.seconds, "", &passed)
}

/// The labels of the Job, its pods and its ConfigMap.
fn labels(job: &K8sJob) -> Value {
    json!({
        "app.kubernetes.io/name": "bmk",
        RUN_LABEL: job.job,
    })
}

fn config_map_name(job: &K8sJob) -> String {
    format!("{}-config", job.job)
}

/// The Job object: `job.clients` indexed pods on distinct nodes, each running bmk with
/// `args`; `config` says whether the ConfigMap with the config file is mounted.
fn job_object(job: &K8sJob, s: &Scenario, args: Vec<String>, config: bool) -> Value {
    let resources = json!({ "cpu": job.cpu, "memory": job.memory });
    let labels = labels(job);
    let mut mounts = vec![json!({ "name": "results", "mountPath": RESULTS_MOUNT })];
    let mut volumes = vec![json!({
        "name": "results",
        "persistentVolumeClaim": { "claimName": job.results_claim },
    })];
    if config {
        mounts.push(json!({ "name": "config", "mountPath": CONFIG_MOUNT, "readOnly": true }));
        volumes.push(json!({ "name": "config", "configMap": { "name": config_map_name(job) } }));
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job.job,
            "labels": labels,
            "annotations": {
                "bmk/scenario": s.name,
                "bmk/users-per-client": job.users.to_string(),
                "bmk/seconds": job.seconds.to_string(),
            },
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": job.clients,
            "parallelism": job.clients,
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "restartPolicy": "Never",
                    "securityContext": { "fsGroup": IMAGE_USER },
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [{
                                "labelSelector": { "matchLabels": { RUN_LABEL: job.job } },
                                "topologyKey": "kubernetes.io/hostname",
                            }],
                        },
                    },
                    "containers": [{
                        "name": "bmk",
                        "image": job.image,
                        // The results folder first (a claim's fresh volume has none),
                        // then bmk; `exec` so that bmk gets the pod's signals.
                        "command": ["sh", "-c", format!(
                            "mkdir -p {RESULTS_MOUNT}/{} && exec bmk \"$@\"", job.job
                        ), "bmk"],
                        "args": args,
                        "env": [{
                            "name": PASSWORD_ENV,
                            "valueFrom": {
                                "secretKeyRef": { "name": job.secret, "key": job.secret_key },
                            },
                        }],
                        "resources": { "requests": resources, "limits": resources },
                        "volumeMounts": mounts,
                    }],
                    "volumes": volumes,
                },
            },
        },
    })
}

/// The port of a `--metrics-addr=[HOST:]PORT` passed to the pods, if one is.
fn metrics_port(job: &K8sJob) -> Result<Option<u16>, KitError> {
    let Some(arg) = job
        .passed
        .iter()
        .rev()
        .find(|a| option_name(a).as_deref() == Some("metrics-addr"))
    else {
        return Ok(None);
    };
    let value = arg.split_once('=').map(|(_, v)| v.trim()).unwrap_or("");
    value
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|&p| p > 0)
        .map(Some)
        .ok_or_else(|| {
            KitError::Usage(format!(
                "--metrics-addr '{value}': expected PORT or HOST:PORT for the pods to serve their metrics on"
            ))
        })
}

/// Gives the pods of `job_value` the metrics container port and the scrape
/// annotations.
fn expose_metrics(job_value: &mut Value, port: u16) {
    let template = &mut job_value["spec"]["template"];
    template["metadata"]["annotations"] = json!({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": port.to_string(),
        "prometheus.io/path": METRICS_PATH,
    });
    template["spec"]["containers"][0]["ports"] = json!([{
        "name": "metrics",
        "containerPort": port,
        "protocol": "TCP",
    }]);
}

/// The text of the config file `--config-file=PATH` names, for the ConfigMap: a regular
/// file of at most [`bounded_file::CONFIG_FILE`], and one that sets no password (which
/// would land in the manifest).
fn embedded_config(arg: &str, job: &K8sJob) -> Result<String, KitError> {
    let path = arg
        .split_once('=')
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| KitError::Usage("--config-file needs a file: --config-file=PATH".into()))?;
    let text = bounded_file::read_to_string(Path::new(path), bounded_file::CONFIG_FILE)
        .map_err(|e| KitError::Usage(format!("--config-file: cannot read '{path}': {e}")))?;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let name = line.trim_start_matches("--");
        let name = name
            .split('=')
            .next()
            .unwrap_or(name)
            .trim()
            .replace('_', "-");
        if name.contains("password") || name.contains("secret") {
            return Err(KitError::Usage(format!(
                "--config-file '{path}', line {}: --{name}: the password goes in the Secret '{}' (key '{}'), never in the manifest",
                n + 1,
                job.secret,
                job.secret_key
            )));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_image_is_the_local_build_of_this_version() {
        assert_eq!(default_image("0.1.0"), "localhost/bmk:0.1.0");
    }

    #[test]
    fn job_names_are_kubernetes_names() {
        let n = default_job_name("OLTP_RO_10M_8tab-uniform-ps-trx", 64, "20261126t010203");
        assert_eq!(n, "bmk-oltp-ro-10m-8tab-uniform-ps-trx-64u-20261126t010203");
        assert!(check_dns_label("job", &n).is_ok());
        let long = default_job_name(&"X_".repeat(60), 1024, "20261126t010203");
        assert!(long.len() <= 63, "{long}");
        assert!(check_dns_label("job", &long).is_ok(), "{long}");
    }
}
