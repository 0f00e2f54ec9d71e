"""The deployment files are valid and complete: no Docker engine or cluster needed.

* ``docker-compose.yml`` against the Compose specification JSON schema that
  ``check-jsonschema`` bundles (``vendor.compose-spec``: offline, pinned with
  the package in pyproject's dev list);
* ``deploy/k8s/*.yaml`` against the Kubernetes OpenAPI schemas that
  ``kubernetes-validate`` bundles (strict: unknown fields fail), file by file
  and, when ``kubectl`` is installed, as built by ``kubectl kustomize``;
* policies: every compose service has a health check; every Deployment has
  readiness and liveness probes, resource requests and limits and runs as
  non-root; beat is a single replica that never overlaps; the HPA scales the
  workers; settings come from the ConfigMap and the Secret;
* the Dockerfile is multi-stage and ends as a non-root user; the Prometheus
  scrape config and the Grafana dashboard name only metrics the code defines.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
K8S = ROOT / "deploy" / "k8s"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
PROMETHEUS = ROOT / "deploy" / "prometheus" / "prometheus.yml"
GRAFANA = ROOT / "deploy" / "grafana"
K8S_VERSIONS = ("1.30.0", kubernetes_validate.utils.latest_version())
"""Oldest Kubernetes the manifests promise to work on (gRPC probes, HPA v2, PDB v1), and the newest known."""


def _compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def _k8s_docs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        out += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return out


def _of_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in _k8s_docs() if doc["kind"] == kind]


# -- compose --------------------------------------------------------------------------------


def test_compose_file_matches_the_compose_specification_schema():
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_compose_schema_check_rejects_a_broken_file(tmp_path):
    # The check has teeth: a misspelt key fails it.
    bad = tmp_path / "docker-compose.yml"
    bad.write_text(COMPOSE.read_text().replace("healthcheck:", "healthchek:", 1))
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(bad)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0


def test_every_compose_service_has_a_health_check():
    services = _compose()["services"]
    for name, service in services.items():
        check = service.get("healthcheck")
        assert check, f"service {name} has no healthcheck"
        assert not check.get("disable"), f"service {name} disables its healthcheck"
        assert check.get("test"), f"service {name}: healthcheck without a test"


def test_compose_runs_the_whole_stack():
    services = _compose()["services"]
    roles = {"postgres", "redis", "migrate", "referee", "worker", "beat", "web", "prometheus", "grafana"}
    assert roles <= set(services)
    bots = [n for n, s in services.items() if "parterre.samplebot" in " ".join(s.get("entrypoint") or [])]
    assert len(bots) == 2
    assert services["referee"]["deploy"]["replicas"] == 2
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["beat"]["deploy"]["replicas"] == 1
    assert services["migrate"]["command"] == ["db", "migrate"]
    assert services["migrate"]["restart"] == "no"
    for name in ("referee", "worker", "beat", "web", *bots):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully", name
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
    for name, service in services.items():
        for dep in service.get("depends_on") or {}:
            assert dep in services, f"{name} depends on unknown service {dep}"
    # one image, run as its roles
    assert services["referee"]["command"][0] == "referee"
    assert services["worker"]["command"][0] == "worker"
    assert services["web"]["command"][0] == "web"
    assert services["beat"]["command"] == ["beat"]
    # the Celery prefork pool needs the multiprocess mode of prometheus_client
    assert services["worker"]["environment"]["PROMETHEUS_MULTIPROC_DIR"]


def test_compose_mounts_the_monitoring_configuration_that_exists():
    services = _compose()["services"]
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"


# -- kubernetes -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_k8s_manifests_match_the_kubernetes_schemas(version):
    docs = _k8s_docs()
    assert docs
    for filename, doc in docs:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{filename} {doc['kind']}/{doc['metadata']['name']} (k8s {version}): {exc}")


def test_k8s_schema_check_rejects_a_broken_manifest():
    deployment = json.loads(json.dumps(_of_kind("Deployment")[0]))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)


def test_kustomization_lists_every_manifest():
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_build_is_valid():
    proc = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSIONS[-1], strict=True)
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "parterre"
    kinds = sorted(d["kind"] for d in docs)
    assert kinds.count("Deployment") == 4 and "Job" in kinds and "HorizontalPodAutoscaler" in kinds


def test_every_deployment_has_probes_resources_and_runs_as_non_root():
    deployments = _of_kind("Deployment")
    assert {d["metadata"]["name"] for d in deployments} == {"referee", "worker", "beat", "web"}
    for d in deployments:
        name = d["metadata"]["name"]
        pod = d["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        for c in pod["containers"]:
            assert c.get("readinessProbe"), f"{name}/{c['name']}: no readinessProbe"
            assert c.get("livenessProbe"), f"{name}/{c['name']}: no livenessProbe"
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(c["resources"][part]), f"{name}/{c['name']}: {part}"
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            refs = {next(iter(e.values()))["name"] for e in c["envFrom"]}
            assert refs == {"parterre-config", "parterre-secrets"}, name
            ports = {p["containerPort"] for p in c["ports"]}
            assert 9100 in ports, f"{name}: no metrics port"


def test_probes_point_at_the_health_endpoints():
    by_name = {d["metadata"]["name"]: d["spec"]["template"]["spec"]["containers"][0] for d in _of_kind("Deployment")}
    assert by_name["referee"]["readinessProbe"]["grpc"]["port"] == 50051  # the gRPC health service
    assert by_name["web"]["readinessProbe"]["httpGet"]["path"] == "/api/health"
    for name in ("worker", "beat"):
        assert by_name[name]["livenessProbe"]["httpGet"]["path"] == "/metrics"


def test_beat_is_a_single_replica_that_never_overlaps():
    beat = next(d for d in _of_kind("Deployment") if d["metadata"]["name"] == "beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"]["type"] == "Recreate"
    hpas = _of_kind("HorizontalPodAutoscaler")
    assert all(h["spec"]["scaleTargetRef"]["name"] != "beat" for h in hpas)


def test_workers_scale_with_a_horizontal_pod_autoscaler():
    (hpa,) = _of_kind("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"}
    assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]


def test_configmap_secret_and_migration_job():
    (cm,) = _of_kind("ConfigMap")
    (secret,) = _of_kind("Secret")
    assert cm["metadata"]["name"] == "parterre-config" and secret["metadata"]["name"] == "parterre-secrets"
    assert {"PARTERRE_REDIS_URL", "PARTERRE_REFEREE_ADDRESS", "PARTERRE_METRICS_PORT"} <= set(cm["data"])
    assert {"PARTERRE_DATABASE_URL", "PARTERRE_SERVICE_TOKEN"} <= set(secret["stringData"])
    assert not {"PARTERRE_DATABASE_URL", "PARTERRE_SERVICE_TOKEN"} & set(cm["data"]), "secrets in the ConfigMap"
    (job,) = _of_kind("Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["db", "migrate"]
    from parterre.settings import load

    load({**cm["data"], **secret["stringData"]})  # the settings parse as the processes will read them


# -- image, Prometheus, Grafana ---------------------------------------------------------------


def test_dockerfile_is_multi_stage_and_runs_as_non_root():
    lines = [ln.strip() for ln in DOCKERFILE.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    stages = [ln for ln in lines if ln.upper().startswith("FROM ")]
    assert len(stages) >= 2
    assert any("--from=build" in ln for ln in lines if ln.upper().startswith("COPY"))
    final = lines[lines.index(stages[-1]):]
    users = [ln.split()[1] for ln in final if ln.upper().startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    for ln in lines:
        if ln.upper().startswith("COPY ") and "--from" not in ln:
            for source in ln.split()[1:-1]:
                assert (ROOT / source).exists(), f"Dockerfile copies missing {source}"
    assert (ROOT / "deploy" / "Dockerfile.dockerignore").exists()


def test_the_runtime_image_carries_the_hosted_bots_sandbox():
    """The workers run hosted bots in bubblewrap with the system's /usr (docs/hosted.md): the final stage
    installs bwrap and the Debian package of every runtime the sandbox offers (Debian's python3.11 and numpy,
    Node.js, the JVM), and keeps the unpacked bots on the writable /tmp."""
    from workers.hosting.sandbox import RUNTIME_PACKAGES, RUNTIMES

    text = DOCKERFILE.read_text()
    final = text[text.rindex("\nFROM "):]
    installs = " ".join(ln for ln in final.replace("\\\n", " ").splitlines() if "apt-get install" in ln).split()
    assert {"bubblewrap", "python3.11", "python3-numpy", "nodejs", "openjdk-17-jre-headless"} <= set(installs), installs
    assert set(RUNTIME_PACKAGES) == set(RUNTIMES) - {"static"}
    assert set(RUNTIME_PACKAGES.values()) <= set(installs), installs
    assert "PARTERRE_HOSTED_DIR=/tmp/" in final  # the root file system is read-only (compose, k8s)


def _defined_metric_names() -> set[str]:
    from prometheus_client import REGISTRY

    import ladder.metrics  # noqa: F401 - registers the metrics
    import referee.metrics  # noqa: F401 - registers the metrics
    import web.metrics  # noqa: F401 - registers the metrics
    import workers.metrics  # noqa: F401 - registers the metrics

    names = set()
    for family in REGISTRY.collect():
        for sample in family.samples:
            names.add(sample.name)
        names.add(family.name)
        if family.type == "counter":
            names.add(family.name + "_total")
        if family.type == "histogram":
            names |= {family.name + s for s in ("_bucket", "_count", "_sum")}
    return names


def test_grafana_dashboard_uses_only_defined_metrics_and_the_provisioned_datasource():
    dashboard = json.loads((GRAFANA / "dashboards" / "parterre.json").read_text())
    datasource = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    defined = _defined_metric_names()
    used = set()
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len(panels) >= 10
    for panel in panels:
        assert panel["datasource"]["uid"] == uid, panel["title"]
        for target in panel["targets"]:
            used |= set(re.findall(r"\bparterre_[a-z_]+", target["expr"]))
    missing = used - defined
    assert not missing, f"dashboard queries undefined metrics: {sorted(missing)}"
    prefixes = {"parterre_referee_", "parterre_worker_", "parterre_web_", "parterre_ladder_"}
    assert all(any(u.startswith(p) for u in used) for p in prefixes)
    provider = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "parterre.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


def test_prometheus_scrapes_every_role_on_its_metrics_port():
    config = yaml.safe_load(PROMETHEUS.read_text())
    services = _compose()["services"]
    port = int(services["referee"]["environment"]["PARTERRE_METRICS_PORT"])
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    for role in ("referee", "worker", "beat", "web"):
        (sd,) = jobs[role]["dns_sd_configs"]
        assert sd["names"] == [role] and role in services
        assert sd["port"] == port


# -- the CI compose stage (deploy/ci/) --------------------------------------------------------

CI_DIR = ROOT / "deploy" / "ci"


class _ResetLoader(yaml.SafeLoader):  # type: ignore[name-defined,misc]  # yaml comes from importorskip
    """Compose's ``!reset`` tag (an override that empties a value) read as ``None``."""


_ResetLoader.add_constructor("!reset", lambda loader, node: None)


def _ci_override() -> dict[str, Any]:
    data: dict[str, Any] = yaml.load((CI_DIR / "docker-compose.ci.yml").read_text(), Loader=_ResetLoader)
    return data


def test_dockerfile_builds_offline_with_the_engines_own_frontend() -> None:
    # A `# syntax=` directive makes BuildKit fetch that frontend image from a registry at every
    # build: with no registry (CI, air-gapped hosts) the build fails before its first step.
    first = [ln for ln in DOCKERFILE.read_text().splitlines() if ln.strip()]
    assert not any(re.match(r"#\s*syntax\s*=", ln, re.I) for ln in first)
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim-bookworm$", DOCKERFILE.read_text(), re.M)
    assert all("${PYTHON_IMAGE}" in ln for ln in first if ln.upper().startswith("FROM "))


def test_ci_override_keeps_public_images_as_defaults_and_covers_every_service() -> None:
    base, ci = _compose()["services"], _ci_override()["services"]
    # users keep the public images; only the override names the CI ones
    assert base["postgres"]["image"].startswith("postgres:") and base["redis"]["image"].startswith("redis:")
    assert base["prometheus"]["image"].startswith("prom/prometheus:")
    for name in base:
        assert name in ci, f"the CI override leaves {name} on the bridge network"
        if name == "grafana":
            assert ci[name]["profiles"] == ["grafana"]  # not started in CI: Debian has no Grafana
            continue
        assert ci[name]["network_mode"] == "host", name
    # the image is built from deploy/Dockerfile with only its base-image argument changed
    build = ci["migrate"]["build"]
    assert build["dockerfile"] == "deploy/Dockerfile" and set(build["args"]) == {"PYTHON_IMAGE"}
    # host networking: two replicas would bind the same ports, so one service per replica,
    # each worker under its own Celery node name (F-13 requeues by name)
    assert ci["referee"]["deploy"]["replicas"] == ci["worker"]["deploy"]["replicas"] == 1
    assert ci["referee-2"]["extends"]["service"] == "referee" and ci["worker-2"]["extends"]["service"] == "worker"
    names = [c[c.index("--hostname") + 1] for c in (ci["worker"]["command"], ci["worker-2"]["command"])]
    assert len(set(names)) == 2


def test_ci_ports_agree_between_override_prometheus_and_driver() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ci_e2e", CI_DIR / "e2e.py")
    assert spec is not None and spec.loader is not None
    e2e = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(e2e)
    text = (CI_DIR / "docker-compose.ci.yml").read_text()
    in_override = {int(p) for p in re.findall(r"127\.0\.0\.1:(\d{5})", text)}
    in_override |= {int(p) for p in re.findall(r'"(\d{5})"', text)}
    assert set(e2e.PORTS.values()) == in_override
    prometheus = yaml.safe_load((CI_DIR / "prometheus.ci.yml").read_text())
    targets = {int(t.rsplit(":", 1)[1]) for job in prometheus["scrape_configs"]
               for sc in job["static_configs"] for t in sc["targets"]}
    assert targets == {p for name, p in e2e.PORTS.items() if "metrics" in name} | {e2e.PORTS["prometheus"]}
    jobs = {job["job_name"] for job in prometheus["scrape_configs"]}
    assert jobs == {job["job_name"] for job in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]}
    assert len(set(e2e.PORTS.values())) == len(e2e.PORTS)
    assert all(25000 <= p < 27000 for p in e2e.PORTS.values())


# -- hosted bots: the worker's sandbox settings (docs/hosted.md "Running the workers unprivileged") --

SECCOMP = ROOT / "deploy" / "seccomp"


def _seccomp_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_worker_profile", SECCOMP / "make_worker_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_the_compose_worker_may_run_bubblewrap_and_keeps_the_rest() -> None:
    services = _compose()["services"]
    worker = services["worker"]
    assert set(worker["security_opt"]) == {"no-new-privileges:true", "seccomp=./deploy/seccomp/worker.json",
                                           "systempaths=unconfined", "apparmor=unconfined"}
    assert (ROOT / "deploy" / "seccomp" / "worker.json").is_file()
    assert worker["cap_drop"] == ["ALL"] and worker["read_only"] is True and "user" not in worker
    assert "/tmp:exec" in worker["tmpfs"]  # the static runtime executes the unpacked bot from /tmp
    for name, service in services.items():
        if name != "worker" and "security_opt" in service:
            assert service["security_opt"] == ["no-new-privileges:true"], name  # the strict default elsewhere


def test_the_worker_seccomp_profile_is_an_allowlist_that_admits_bubblewrap() -> None:
    gen = _seccomp_module()
    profile = json.loads((SECCOMP / "worker.json").read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"  # anything not listed (newer calls too) is refused
    (rule,) = profile["syscalls"]
    assert rule["action"] == "SCMP_ACT_ALLOW" and "args" not in rule
    names = set(rule["names"])
    assert {"clone", "clone3", "unshare", "mount", "umount2", "pivot_root"} <= names
    assert {"read", "write", "execve", "wait4", "prlimit64", "setrlimit", "socket", "epoll_wait"} <= names
    assert not names & {"kexec_load", "init_module", "bpf", "keyctl", "ptrace", "open_by_handle_at",
                        "io_uring_setup", "setns", "reboot", "userfaultfd", "perf_event_open"}
    assert not names & set(gen.DENIED)
    if gen.HEADER.exists():  # regenerate: the committed file is what the script writes
        assert (SECCOMP / "worker.json").read_text() == gen.render()


def test_the_k8s_worker_may_run_bubblewrap_and_the_other_deployments_may_not() -> None:
    for d in _of_kind("Deployment"):
        pod = d["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert c["securityContext"]["allowPrivilegeEscalation"] is False
        assert c["securityContext"]["readOnlyRootFilesystem"] is True
        if d["metadata"]["name"] == "worker":
            assert pod["hostUsers"] is False  # procMount: Unmasked needs a user-namespaced pod
            assert pod["securityContext"]["seccompProfile"] == {"type": "Localhost",
                                                               "localhostProfile": "parterre/worker.json"}
            assert pod["securityContext"]["appArmorProfile"] == {"type": "Unconfined"}
            assert c["securityContext"]["procMount"] == "Unmasked"
            assert pod["securityContext"]["runAsUser"] == 10001
        else:
            assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, d["metadata"]["name"]
            assert "procMount" not in c["securityContext"] and "hostUsers" not in pod
