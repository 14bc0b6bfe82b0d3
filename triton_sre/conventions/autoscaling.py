"""Autoscaling (issue 21): the scaling signals' recording rules, the spec's signal names and
defaults, the Kubernetes names the rendered HPA/KEDA objects and the Scaling dashboard row use,
and the lagging-autoscaler alert."""

from __future__ import annotations

from typing import Final

# -- recording rules (labels: job and instance, or job alone; plus the cluster label when set) ------
REC_AUTOSCALE_WINDOW: Final = "1m"  # short: a scaling signal must follow the load within a minute
REC_QUEUE_PER_REQUEST_INSTANCE: Final = (
    f"instance:triton_queue_seconds_per_request:ratio_rate{REC_AUTOSCALE_WINDOW}"
)
REC_QUEUE_PER_REQUEST_JOB: Final = f"job:triton_queue_seconds_per_request:ratio_rate{REC_AUTOSCALE_WINDOW}"
# The gauge signals (pending requests, LLM requests waiting) are averaged over this many scrapes of
# the spec's `scrape.interval` (default DEFAULT_SCRAPE_INTERVAL_S): 15 s -> [30s]. One scrape is the
# instant (a batching instance reads 0 whenever it has just taken the queue); four ([1m]) answered a
# step 15-30 s later (bench/RESULTS.md, autoscale29 and autoscale30). An average needs two samples,
# not the four a rate() needs: a missed scrape leaves it the instant, a rate() nothing.
AUTOSCALE_SIGNAL_SCRAPES: Final = 2
DEFAULT_SCRAPE_INTERVAL_S: Final = 15.0  # what the rules' 1m rates are built for (4 scrapes)
REC_PENDING_INSTANCE: Final = "instance:triton_pending_requests:sum"
REC_PENDING_JOB: Final = "job:triton_pending_requests:sum"
REC_LLM_WAITING_JOB: Final = "job:triton_llm_requests_waiting:sum"
REC_LLM_KV_CACHE_JOB: Final = "job:triton_llm_kv_cache_utilization:max"
REC_QUEUE_SECONDS_INSTANCE: Final = f"instance:triton_queue_seconds:rate{REC_AUTOSCALE_WINDOW}"
REC_REQUESTS_INSTANCE: Final = f"instance:triton_requests:rate{REC_AUTOSCALE_WINDOW}"
# per `autoscaling:` entry (label `deployment`): serving Triton pods (`up`), the HPA usage ratio
# (value / target, per replica for AverageValue signals) and the replicas the HPA formula asks for
REC_SERVING_REPLICAS: Final = "job:triton_serving_replicas:count"
REC_AUTOSCALE_USAGE: Final = "deployment:triton_autoscale_usage:ratio"
REC_AUTOSCALE_DESIRED: Final = "deployment:triton_autoscale_desired_replicas:ceil"
L_DEPLOYMENT: Final = "deployment"
GROUP_AUTOSCALING: Final = "triton-sre.autoscaling"
GROUP_AUTOSCALING_ALERTS: Final = "triton-sre.autoscaling-alerts"

# -- the spec's `autoscaling:` signals ----------------------------------------------------------------
SIGNAL_QUEUE_TIME: Final = "queue_time"  # request-weighted queue seconds per request (HPA: Value)
SIGNAL_PENDING: Final = "pending_requests"  # requests waiting, per replica (HPA: AverageValue)
SIGNAL_LLM_WAITING: Final = "llm_waiting"  # LLM requests waiting for the batch, per replica
SIGNAL_LLM_KV_CACHE: Final = "llm_kv_cache"  # the fullest KV cache, a ratio (HPA: Value)
SIGNALS: Final = (SIGNAL_QUEUE_TIME, SIGNAL_PENDING, SIGNAL_LLM_WAITING, SIGNAL_LLM_KV_CACHE)
# signal -> (job-level recording rule, per replica): per-replica signals are totals the HPA divides
# by the replica count (AverageValue); the others are already per request or a ratio (Value).
SIGNAL_RULES: Final = {
    SIGNAL_QUEUE_TIME: (REC_QUEUE_PER_REQUEST_JOB, False),
    SIGNAL_PENDING: (REC_PENDING_JOB, True),
    SIGNAL_LLM_WAITING: (REC_LLM_WAITING_JOB, True),
    SIGNAL_LLM_KV_CACHE: (REC_LLM_KV_CACHE_JOB, False),
}
# Defaults (docs/autoscaling.md "Targets"). The default signal is the backlog: it needs no rate
# window and leads the burn where the 1-minute queue mean lags it (bench/RESULTS.md).
AUTOSCALE_DEFAULT_SIGNAL: Final = SIGNAL_PENDING
# pending_requests: requests waiting per replica. A replica executes `instances x max_batch_size`
# requests at once; a backlog of one more means every new request waits a whole execution (Little's
# law at capacity: waiting = throughput x queue time = concurrency x 1 round). The default assumes
# one instance without dynamic batching (concurrency 1); set the target to the model's concurrency.
AUTOSCALE_PENDING_TARGET: Final = 1.0
# queue_time: if waits are roughly exponential, the SLO quantile q of the queue is ln(1/(1-q)) x its
# mean (p99: 4.6 x); the mean at which the queue alone reaches the threshold is threshold / that
# factor, and the target keeps this headroom below it for the load still rising while a replica loads.
AUTOSCALE_QUEUE_HEADROOM: Final = 2.0
# llm_waiting: this share of operational.pending_requests per replica; llm_kv_cache: this share of
# the saturation ratio.
AUTOSCALE_LLM_WAITING_SHARE: Final = 0.5
AUTOSCALE_KV_TARGET_SHARE: Final = 0.8
AUTOSCALE_MIN_REPLICAS: Final = 2  # the warm floor: one replica loading a model is one serving none
AUTOSCALE_SCALE_DOWN_MIN_S: Final = 300  # Kubernetes' own default scale-down stabilisation
AUTOSCALE_PERIOD_MAX_S: Final = 1800  # the HPA API's largest policy periodSeconds
AUTOSCALE_WINDOW_MAX_S: Final = 3600  # the HPA API's largest stabilizationWindowSeconds
HPA_TOLERANCE: Final = 0.1  # kube-controller-manager --horizontal-pod-autoscaler-tolerance
K8S_INT32_MAX: Final = 2**31 - 1  # the HPA's minReplicas / maxReplicas are int32
# a target renders as a Kubernetes quantity exact to a thousandth (100m): smaller would be "0"; a
# quantity is at most 2^63-1, and a billion waiting requests per replica is already no target
AUTOSCALE_TARGET_MIN: Final = 0.001
AUTOSCALE_TARGET_MAX: Final = 1e9
# the longest model load (and startup-probe budget) accepted: the lagging alert waits a startup budget
# (2 x load + margin), and its generated test simulates that wait in 15 s steps
MAX_LOAD_TIME_S: Final = 86400

# -- Kubernetes names ------------------------------------------------------------------------------
K8S_AUTOSCALING_DIR: Final = "k8s/autoscaling"  # under deploy/
AUTOSCALE_PROMETHEUS_URL: Final = "http://prometheus-operated.monitoring.svc:9090"  # KEDA's serverAddress
# kube-state-metrics (the Scaling row reads the Deployment's ready replicas)
KSM_DEPLOYMENT_READY: Final = "kube_deployment_status_replicas_ready"
KSM_LABEL_DEPLOYMENT: Final = "deployment"
KSM_LABEL_NAMESPACE: Final = "namespace"
# a container restarted in place (TritonContainerRestarted): its restart count and why it last ended
KSM_CONTAINER_RESTARTS: Final = "kube_pod_container_status_restarts_total"
KSM_LAST_TERMINATED_REASON: Final = "kube_pod_container_status_last_terminated_reason"
KSM_LABEL_POD: Final = "pod"
KSM_LABEL_CONTAINER: Final = "container"
KSM_LABEL_REASON: Final = "reason"
# TritonContainerRestarted's reason where kube-state-metrics gives none
KSM_REASON_UNKNOWN: Final = "unknown"
# the Triton container's name in deploy/k8s (slos.yaml scrape.triton_container)
DEFAULT_TRITON_CONTAINER: Final = "triton"

# -- the lagging-autoscaler alert ------------------------------------------------------------------
ALERT_AUTOSCALER_LAGGING: Final = "TritonAutoscalerLagging"
RUNBOOK_AUTOSCALER_LAGGING: Final = "triton-autoscaler-lagging"
