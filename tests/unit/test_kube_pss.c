/* SPDX-License-Identifier: Apache-2.0 */
/* kube_pss: the Pod Security Standards, case by case — for every check an
 * admitted and a violating pod, each container kind, the pod-level versus
 * container-level precedence of runAsNonRoot and seccomp, the checks that
 * replace baseline ones at restricted, wrong JSON types, and the pod the
 * injector produces today (docs/injector.md). Rows hold their pod as a
 * char array (Criterion runs each parameter in a fresh process image: no
 * pointers), written with ' for " to stay readable. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube_pss.h"
#include "base/strbuf.h"
#include "base/util.h"

/* rows name only what they check */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define B KUBE_PSS_BASELINE
#define R KUBE_PSS_RESTRICTED
#define P KUBE_PSS_PRIVILEGED

/* clang-format off */
#define POD(spec) \
	"{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'}," \
	"'spec':" spec "}"
#define APOD(ann, spec) \
	"{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'," \
	"'annotations':" ann "},'spec':" spec "}"
/* one container named app, with more fields */
#define ONE(more) POD("{'containers':[{'name':'app','image':'i'," more "}]}")
#define SC(x) "'securityContext':{" x "}"
/* what the restricted level requires of every container, and all of it
 * but one part */
#define APE_F "'allowPrivilegeEscalation':false"
#define NR_T "'runAsNonRoot':true"
#define SECC "'seccompProfile':{'type':'RuntimeDefault'}"
#define DROP "'capabilities':{'drop':['ALL']}"
#define HARD APE_F "," NR_T "," SECC "," DROP
#define NO_APE NR_T "," SECC "," DROP
#define NO_NR APE_F "," SECC "," DROP
#define NO_SECC APE_F "," NR_T "," DROP
#define NO_CAPS APE_F "," NR_T "," SECC
#define CTR(name, sc) "{'name':'" name "','image':'i'," SC(sc) "}"
#define HC(name, more) CTR(name, HARD more)
/* a pod restricted admits, with more spec fields */
#define RPOD(more) POD("{'containers':[" HC("app", "") "]" more "}")

#define C0 "spec.containers[0]"
#define SC0 C0 ".securityContext"
#define I0 "spec.initContainers[0]"
#define E0 "spec.ephemeralContainers[0]"
#define PSC "spec.securityContext"

/* the injector's sidecar (agent/src/inject.c sidecar_security()) */
#define SIDECAR_SC \
	"'securityContext':{'capabilities':{'drop':['ALL'],'add':[" \
	"'SYS_PTRACE','SETUID','SETGID','KILL','DAC_READ_SEARCH']}," \
	"'readOnlyRootFilesystem':true,'allowPrivilegeEscalation':false," \
	"'runAsUser':0,'runAsNonRoot':false}"
#define SIDECAR(more) \
	"{'name':'oomlens-sidecar','image':'ghcr.io/oomlens/" \
	"oomlens-sidecar:0.1.0','args':['run']," more SIDECAR_SC "," \
	"'volumeMounts':[{'name':'oomlens-spool','mountPath':" \
	"'/var/run/oomlens-spool'},{'name':'oomlens-podinfo'," \
	"'mountPath':'/etc/oomlens','readOnly':true}]}"
#define INJ_VOLUMES \
	"'volumes':[{'name':'oomlens-spool','emptyDir':{'sizeLimit':" \
	"'256Mi'}},{'name':'oomlens-podinfo','downwardAPI':{'items':[" \
	"{'path':'annotations','fieldRef':{'fieldPath':" \
	"'metadata.annotations'}}]}}]"
#define INJ_ANN "{'oomlens.io/capture':'true','oomlens.io/injected':'x'}"
#define SC1 "spec.containers[1].securityContext"
#define CAPS1 SC1 ".capabilities.add"
#define AA "container.apparmor.security.beta.kubernetes.io/"

struct pss_case {
	char name[64];
	char pod[2048];
	enum kube_pss_level level;
	int ret;
	/* each violation as "check path=value", in order; the rest empty */
	char want[10][KUBE_PSS_PATH_MAX + 80];
};

static struct pss_case cases[] = {
	/* input */
	{"not an object", "['x']", B, -EBADMSG},
	{"not JSON", "{'spec':", B, -EBADMSG},
	{"no spec", "{'metadata':{}}", B, -EBADMSG},
	{"spec not an object", "{'spec':'x'}", P, -EBADMSG},
	{"minimal pod, baseline", ONE("'x':1"), B, 0},
	{"privileged admits all",
	 APOD("{'" AA "app':'u'}",
	      "{'hostPID':true,'volumes':[{'name':'h','hostPath':{}}],"
	      "'containers':[{'name':'app'," SC("'privileged':true") "}]}"),
	 P, 0},
	{"minimal pod, restricted", ONE("'x':1"), R, 1,
	 {"allowPrivilegeEscalation " SC0 ".allowPrivilegeEscalation=",
	  "runAsNonRoot " SC0 ".runAsNonRoot=",
	  "seccompProfile_restricted " SC0 ".seccompProfile=",
	  "capabilities_restricted " SC0 ".capabilities.drop="}},
	{"hardened pod, restricted", RPOD(""), R, 0},
	{"no containers at all, restricted", POD("{}"), R, 0},

	/* windowsHostProcess */
	{"hostProcess false",
	 ONE(SC("'windowsOptions':{'hostProcess':false}")), B, 0},
	{"hostProcess on a container",
	 ONE(SC("'windowsOptions':{'hostProcess':true}")), B, 1,
	 {"windowsHostProcess " SC0 ".windowsOptions.hostProcess=true"}},
	{"hostProcess on the pod",
	 POD("{'securityContext':{'windowsOptions':{'hostProcess':true}},"
	     "'containers':[{'name':'a'}]}"), B, 1,
	 {"windowsHostProcess " PSC ".windowsOptions.hostProcess=true"}},
	{"hostProcess on an init container",
	 POD("{'initContainers':[{'name':'i',"
	     SC("'windowsOptions':{'hostProcess':true}") "}]}"), B, 1,
	 {"windowsHostProcess " I0
	  ".securityContext.windowsOptions.hostProcess=true"}},
	{"hostProcess a string",
	 ONE(SC("'windowsOptions':{'hostProcess':'no'}")), B, 1,
	 {"windowsHostProcess " SC0 ".windowsOptions.hostProcess=\"no\""}},

	/* hostNamespaces */
	{"host namespaces false",
	 POD("{'hostNetwork':false,'hostPID':false,'hostIPC':false}"), B, 0},
	{"hostNetwork", POD("{'hostNetwork':true}"), B, 1,
	 {"hostNamespaces spec.hostNetwork=true"}},
	{"hostPID and hostIPC", POD("{'hostPID':true,'hostIPC':true}"), B, 1,
	 {"hostNamespaces spec.hostPID=true",
	  "hostNamespaces spec.hostIPC=true"}},
	{"hostIPC a string", POD("{'hostIPC':'yes'}"), B, 1,
	 {"hostNamespaces spec.hostIPC=\"yes\""}},
	{"hostNetwork at restricted", RPOD(",'hostNetwork':true"), R, 1,
	 {"hostNamespaces spec.hostNetwork=true"}},
	{"null is unset", POD("{'hostNetwork':null}"), B, 0},

	/* privileged */
	{"privileged false", ONE(SC("'privileged':false")), B, 0},
	{"privileged second container",
	 POD("{'containers':[{'name':'a'},{'name':'b',"
	     SC("'privileged':true") "}]}"), B, 1,
	 {"privileged " SC1 ".privileged=true"}},
	{"privileged init container",
	 POD("{'initContainers':[{'name':'i'," SC("'privileged':true") "}]}"),
	 B, 1, {"privileged " I0 ".securityContext.privileged=true"}},
	{"privileged ephemeral container",
	 POD("{'containers':[{'name':'a'}],'ephemeralContainers':[{'name':"
	     "'d','targetContainerName':'a'," SC("'privileged':true") "}]}"),
	 B, 1, {"privileged " E0 ".securityContext.privileged=true"}},
	{"privileged a number", ONE(SC("'privileged':1")), B, 1,
	 {"privileged " SC0 ".privileged=1"}},

	/* capabilities_baseline */
	{"caps: the default set",
	 ONE(SC("'capabilities':{'add':['AUDIT_WRITE','CHOWN',"
		"'DAC_OVERRIDE','FOWNER','FSETID','KILL','MKNOD',"
		"'NET_BIND_SERVICE','SETFCAP','SETGID','SETPCAP','SETUID',"
		"'SYS_CHROOT'],'drop':['NET_RAW']}")), B, 0},
	{"caps: NET_ADMIN",
	 ONE(SC("'capabilities':{'add':['CHOWN','NET_ADMIN']}")), B, 1,
	 {"capabilities_baseline " SC0 ".capabilities.add[1]=\"NET_ADMIN\""}},
	{"caps: NET_RAW init container",
	 POD("{'initContainers':[{'name':'i',"
	     SC("'capabilities':{'add':['NET_RAW']}") "}]}"), B, 1,
	 {"capabilities_baseline " I0
	  ".securityContext.capabilities.add[0]=\"NET_RAW\""}},
	{"caps: ALL ephemeral container",
	 POD("{'ephemeralContainers':[{'name':'d',"
	     SC("'capabilities':{'add':['ALL']}") "}]}"), B, 1,
	 {"capabilities_baseline " E0
	  ".securityContext.capabilities.add[0]=\"ALL\""}},
	{"caps: lower case is another name",
	 ONE(SC("'capabilities':{'add':['chown']}")), B, 1,
	 {"capabilities_baseline " SC0 ".capabilities.add[0]=\"chown\""}},
	{"caps: a number in add",
	 ONE(SC("'capabilities':{'add':['KILL',7]}")), B, 1,
	 {"capabilities_baseline " SC0 ".capabilities.add[1]=7"}},
	{"caps: a string", ONE(SC("'capabilities':'ALL'")), B, 1,
	 {"capabilities_baseline " SC0 ".capabilities=\"ALL\""}},

	/* a malformed securityContext or container: each check reading it */
	{"securityContext an array", ONE("'securityContext':[]"), B, 1,
	 {"windowsHostProcess " SC0 "=[...]", "privileged " SC0 "=[...]",
	  "capabilities_baseline " SC0 "=[...]",
	  "appArmorProfile " SC0 "=[...]", "seLinuxOptions " SC0 "=[...]",
	  "procMount " SC0 "=[...]", "seccompProfile_baseline " SC0 "=[...]"}},
	{"containers an object", POD("{'containers':{'name':'a'}}"), B, 1,
	 {"windowsHostProcess spec.containers={...}",
	  "privileged spec.containers={...}",
	  "capabilities_baseline spec.containers={...}",
	  "hostPorts spec.containers={...}",
	  "hostProbesAndHostLifecycle spec.containers={...}",
	  "appArmorProfile spec.containers={...}",
	  "seLinuxOptions spec.containers={...}",
	  "procMount spec.containers={...}",
	  "seccompProfile_baseline spec.containers={...}"}},
	{"a container a string", POD("{'containers':['app']}"), B, 1,
	 {"windowsHostProcess " C0 "=\"app\"", "privileged " C0 "=\"app\"",
	  "capabilities_baseline " C0 "=\"app\"", "hostPorts " C0 "=\"app\"",
	  "hostProbesAndHostLifecycle " C0 "=\"app\"",
	  "appArmorProfile " C0 "=\"app\"", "seLinuxOptions " C0 "=\"app\"",
	  "procMount " C0 "=\"app\"",
	  "seccompProfile_baseline " C0 "=\"app\""}},
	{"a null container is empty", POD("{'containers':[null]}"), B, 0},

	/* hostPathVolumes */
	{"volumes: emptyDir", POD("{'volumes':[{'name':'a','emptyDir':{}}]}"),
	 B, 0},
	{"volumes: hostPath",
	 POD("{'volumes':[{'name':'a','emptyDir':{}},{'name':'h',"
	     "'hostPath':{'path':'/'}}]}"), B, 1,
	 {"hostPathVolumes spec.volumes[1].hostPath={...}"}},
	{"volumes: hostPath a string", POD("{'volumes':[{'hostPath':'/'}]}"),
	 B, 1, {"hostPathVolumes spec.volumes[0].hostPath=\"/\""}},
	{"volumes: an object", POD("{'volumes':{'name':'a'}}"), B, 1,
	 {"hostPathVolumes spec.volumes={...}"}},
	{"volumes: an element a number", POD("{'volumes':[3]}"), B, 1,
	 {"hostPathVolumes spec.volumes[0]=3"}},
	{"volumes: nfs is baseline's",
	 POD("{'volumes':[{'name':'n','nfs':{'server':'s','path':'/'}}]}"),
	 B, 0},

	/* hostPorts */
	{"ports: none on the host",
	 ONE("'ports':[{'containerPort':80},{'containerPort':81,"
	     "'hostPort':0}]"), B, 0},
	{"ports: hostPort",
	 ONE("'ports':[{'containerPort':80},{'containerPort':81,"
	     "'hostPort':8081}]"), B, 1,
	 {"hostPorts " C0 ".ports[1].hostPort=8081"}},
	{"ports: init container hostPort",
	 POD("{'initContainers':[{'name':'i','ports':[{'hostPort':9}]}]}"),
	 B, 1, {"hostPorts " I0 ".ports[0].hostPort=9"}},
	{"ports: ephemeral container hostPort",
	 POD("{'ephemeralContainers':[{'name':'d','ports':[{'hostPort':9}]}"
	     "]}"), B, 1, {"hostPorts " E0 ".ports[0].hostPort=9"}},
	{"ports: hostPort a string", ONE("'ports':[{'hostPort':'80'}]"), B, 1,
	 {"hostPorts " C0 ".ports[0].hostPort=\"80\""}},
	{"ports: hostPort fractional", ONE("'ports':[{'hostPort':0.5}]"), B, 1,
	 {"hostPorts " C0 ".ports[0].hostPort=0.5"}},

	/* hostProbesAndHostLifecycle */
	{"probes: no host",
	 ONE("'livenessProbe':{'httpGet':{'path':'/','port':8080}},"
	     "'readinessProbe':{'tcpSocket':{'port':80,'host':''}},"
	     "'lifecycle':{'preStop':{'exec':{'command':['x']}}}"), B, 0},
	{"probes: liveness host",
	 ONE("'livenessProbe':{'httpGet':{'host':'10.0.0.1','port':80}}"),
	 B, 1,
	 {"hostProbesAndHostLifecycle " C0
	  ".livenessProbe.httpGet.host=\"10.0.0.1\""}},
	{"probes: startup tcp host",
	 POD("{'initContainers':[{'name':'i','startupProbe':{'tcpSocket':"
	     "{'host':'n','port':1}}}]}"), B, 1,
	 {"hostProbesAndHostLifecycle " I0
	  ".startupProbe.tcpSocket.host=\"n\""}},
	{"probes: preStop host",
	 ONE("'lifecycle':{'preStop':{'httpGet':{'host':'evil','port':1}}}"),
	 B, 1,
	 {"hostProbesAndHostLifecycle " C0
	  ".lifecycle.preStop.httpGet.host=\"evil\""}},
	{"probes: a probe a string", ONE("'readinessProbe':'x'"), B, 1,
	 {"hostProbesAndHostLifecycle " C0 ".readinessProbe=\"x\""}},

	/* appArmorProfile */
	{"apparmor: allowed annotations",
	 APOD("{'" AA "a':'runtime/default','" AA "b':'localhost/my','"
	      AA "c':'','other':'unconfined'}",
	      "{'containers':[{'name':'a'}]}"), B, 0},
	{"apparmor: unconfined annotation",
	 APOD("{'" AA "app':'unconfined'}", "{'containers':[{'name':'app'}]}"),
	 B, 1,
	 {"appArmorProfile metadata.annotations[" AA "app]=\"unconfined\""}},
	{"apparmor: annotation a number",
	 APOD("{'" AA "app':1}", "{'containers':[]}"), B, 1,
	 {"appArmorProfile metadata.annotations[" AA "app]=1"}},
	{"apparmor: annotations an array", APOD("['x']", "{}"), B, 1,
	 {"appArmorProfile metadata.annotations=[...]"}},
	{"apparmor: metadata a string",
	 "{'metadata':'x','spec':{'containers':[]}}", B, 1,
	 {"appArmorProfile metadata=\"x\""}},
	{"apparmor: fields allowed",
	 POD("{'securityContext':{'appArmorProfile':{'type':"
	     "'RuntimeDefault'}},'containers':[{'name':'a',"
	     SC("'appArmorProfile':{'type':'Localhost',"
		"'localhostProfile':'p'}") "}]}"), B, 0},
	{"apparmor: pod Unconfined",
	 POD("{'securityContext':{'appArmorProfile':{'type':"
	     "'Unconfined'}}}"), B, 1,
	 {"appArmorProfile " PSC ".appArmorProfile.type=\"Unconfined\""}},
	{"apparmor: ephemeral container without a type",
	 POD("{'ephemeralContainers':[{'name':'d',"
	     SC("'appArmorProfile':{}") "}]}"), B, 1,
	 {"appArmorProfile " E0 ".securityContext.appArmorProfile.type="}},

	/* seLinuxOptions */
	{"selinux: allowed types and a level",
	 POD("{'securityContext':{'seLinuxOptions':{'type':'container_t',"
	     "'level':'s0:c1,c2'}},'containers':[{'name':'a',"
	     SC("'seLinuxOptions':{'type':'container_engine_t'}") "},"
	     "{'name':'b'," SC("'seLinuxOptions':{'type':''}") "}],"
	     "'initContainers':[{'name':'i',"
	     SC("'seLinuxOptions':{'type':'container_init_t'}") "}],"
	     "'ephemeralContainers':[{'name':'d',"
	     SC("'seLinuxOptions':{'type':'container_kvm_t'}") "}]}"), B, 0},
	{"selinux: spc_t", ONE(SC("'seLinuxOptions':{'type':'spc_t'}")), B, 1,
	 {"seLinuxOptions " SC0 ".seLinuxOptions.type=\"spc_t\""}},
	{"selinux: pod user and role",
	 POD("{'securityContext':{'seLinuxOptions':{'user':'system_u',"
	     "'role':'system_r'}}}"), B, 1,
	 {"seLinuxOptions " PSC ".seLinuxOptions.user=\"system_u\"",
	  "seLinuxOptions " PSC ".seLinuxOptions.role=\"system_r\""}},
	{"selinux: empty user", ONE(SC("'seLinuxOptions':{'user':''}")), B, 0},
	{"selinux: ephemeral container type",
	 POD("{'ephemeralContainers':[{'name':'d',"
	     SC("'seLinuxOptions':{'type':'unconfined_t'}") "}]}"), B, 1,
	 {"seLinuxOptions " E0
	  ".securityContext.seLinuxOptions.type=\"unconfined_t\""}},
	{"selinux: a string", ONE(SC("'seLinuxOptions':'spc_t'")), B, 1,
	 {"seLinuxOptions " SC0 ".seLinuxOptions=\"spc_t\""}},

	/* procMount */
	{"procMount Default", ONE(SC("'procMount':'Default'")), B, 0},
	{"procMount Unmasked", ONE(SC("'procMount':'Unmasked'")), B, 1,
	 {"procMount " SC0 ".procMount=\"Unmasked\""}},
	{"procMount Unmasked, init container",
	 POD("{'initContainers':[{'name':'i',"
	     SC("'procMount':'Unmasked'") "}]}"), B, 1,
	 {"procMount " I0 ".securityContext.procMount=\"Unmasked\""}},
	{"procMount a boolean", ONE(SC("'procMount':true")), B, 1,
	 {"procMount " SC0 ".procMount=true"}},
	/* hostUsers: false relaxes baseline upstream (1.35), not here */
	{"procMount Unmasked, hostUsers false",
	 POD("{'hostUsers':false,'containers':[{'name':'a',"
	     SC("'procMount':'Unmasked'") "}]}"), B, 1,
	 {"procMount " SC0 ".procMount=\"Unmasked\""}},
	{"procMount Unmasked at restricted",
	 POD("{'containers':[" HC("a", ",'procMount':'Unmasked'") "]}"), R, 1,
	 {"procMount_restricted " SC0 ".procMount=\"Unmasked\""}},

	/* seccompProfile_baseline */
	{"seccomp: unset and allowed",
	 POD("{'containers':[{'name':'a'},{'name':'b',"
	     SC("'seccompProfile':{'type':'Localhost',"
		"'localhostProfile':'p'}") "}],'initContainers':[{'name':'i',"
	     SC("'seccompProfile':{'type':'RuntimeDefault'}") "}]}"), B, 0},
	{"seccomp: pod Unconfined",
	 POD("{'securityContext':{'seccompProfile':{'type':"
	     "'Unconfined'}}}"), B, 1,
	 {"seccompProfile_baseline " PSC ".seccompProfile.type="
	  "\"Unconfined\""}},
	{"seccomp: init container Unconfined",
	 POD("{'initContainers':[{'name':'i',"
	     SC("'seccompProfile':{'type':'Unconfined'}") "}]}"), B, 1,
	 {"seccompProfile_baseline " I0
	  ".securityContext.seccompProfile.type=\"Unconfined\""}},
	{"seccomp: type a number", ONE(SC("'seccompProfile':{'type':2}")),
	 B, 1, {"seccompProfile_baseline " SC0 ".seccompProfile.type=2"}},

	/* sysctls */
	{"sysctls: the safe set",
	 POD("{'securityContext':{'sysctls':["
	     "{'name':'kernel.shm_rmid_forced','value':'1'},"
	     "{'name':'net.ipv4.ip_local_port_range'},"
	     "{'name':'net.ipv4.tcp_syncookies'},"
	     "{'name':'net.ipv4.ping_group_range'},"
	     "{'name':'net.ipv4.ip_unprivileged_port_start'},"
	     "{'name':'net.ipv4.ip_local_reserved_ports'},"
	     "{'name':'net.ipv4.tcp_keepalive_time'},"
	     "{'name':'net.ipv4.tcp_fin_timeout'},"
	     "{'name':'net.ipv4.tcp_keepalive_intvl'},"
	     "{'name':'net.ipv4.tcp_keepalive_probes'},"
	     "{'name':'net.ipv4.tcp_rmem'},{'name':'net.ipv4.tcp_wmem'}]}}"),
	 B, 0},
	{"sysctls: kernel.msgmax",
	 POD("{'securityContext':{'sysctls':[{'name':"
	     "'net.ipv4.tcp_syncookies'},{'name':'kernel.msgmax',"
	     "'value':'65536'}]}}"), B, 1,
	 {"sysctls " PSC ".sysctls[1].name=\"kernel.msgmax\""}},
	/* in upstream's 1.37 list, not 1.36's */
	{"sysctls: tcp_slow_start_after_idle",
	 POD("{'securityContext':{'sysctls':[{'name':"
	     "'net.ipv4.tcp_slow_start_after_idle'}]}}"), B, 1,
	 {"sysctls " PSC ".sysctls[0].name="
	  "\"net.ipv4.tcp_slow_start_after_idle\""}},
	{"sysctls: no name",
	 POD("{'securityContext':{'sysctls':[{'value':'1'}]}}"), B, 1,
	 {"sysctls " PSC ".sysctls[0].name="}},
	{"sysctls: a string", POD("{'securityContext':{'sysctls':'x'}}"), B, 1,
	 {"sysctls " PSC ".sysctls=\"x\""}},

	/* restrictedVolumes */
	{"volumes: the restricted set",
	 RPOD(",'volumes':[{'name':'a','configMap':{'name':'c'}},"
	      "{'name':'b','csi':{'driver':'d'}},{'name':'c',"
	      "'downwardAPI':{}},{'name':'d','emptyDir':{}},{'name':'e',"
	      "'ephemeral':{}},{'name':'f','image':{'reference':'r'}},"
	      "{'name':'g','persistentVolumeClaim':{'claimName':'c'}},"
	      "{'name':'h','projected':{}},{'name':'i','secret':"
	      "{'secretName':'s'}},{'name':'j'}]"), R, 0},
	{"volumes: nfs at restricted",
	 RPOD(",'volumes':[{'name':'a','emptyDir':{}},{'name':'n','nfs':"
	      "{'server':'s','path':'/'}}]"), R, 1,
	 {"restrictedVolumes spec.volumes[1].nfs={...}"}},
	{"volumes: hostPath at restricted is restrictedVolumes'",
	 RPOD(",'volumes':[{'name':'h','hostPath':{'path':'/'}}]"), R, 1,
	 {"restrictedVolumes spec.volumes[0].hostPath={...}"}},
	{"volumes: configMap a string",
	 RPOD(",'volumes':[{'name':'c','configMap':'c'}]"), R, 1,
	 {"restrictedVolumes spec.volumes[0].configMap=\"c\""}},

	/* allowPrivilegeEscalation */
	{"ape: unset on a container",
	 POD("{'containers':[" CTR("a", NO_APE) "]}"), R, 1,
	 {"allowPrivilegeEscalation " SC0 ".allowPrivilegeEscalation="}},
	{"ape: true on an init container",
	 RPOD(",'initContainers':[" HC("i", "") ","
	      CTR("j", NO_APE ",'allowPrivilegeEscalation':true") "]"), R, 1,
	 {"allowPrivilegeEscalation spec.initContainers[1].securityContext"
	  ".allowPrivilegeEscalation=true"}},
	{"ape: false on every kind",
	 RPOD(",'initContainers':[" HC("i", "") "],'ephemeralContainers':["
	      HC("e", "") "]"), R, 0},
	{"ape: a string",
	 POD("{'containers':["
	     CTR("a", NO_APE ",'allowPrivilegeEscalation':'false'") "]}"),
	 R, 1,
	 {"allowPrivilegeEscalation " SC0
	  ".allowPrivilegeEscalation=\"false\""}},
	{"ape: not baseline's", ONE(SC("'allowPrivilegeEscalation':true")),
	 B, 0},

	/* runAsNonRoot: the pod's value, unless a container's */
	{"nonroot: the pod's true covers containers",
	 POD("{'securityContext':{'runAsNonRoot':true},'containers':["
	     CTR("a", NO_NR) "]}"), R, 0},
	{"nonroot: a container's false beats the pod's true",
	 POD("{'securityContext':{'runAsNonRoot':true},'containers':["
	     CTR("a", NO_NR ",'runAsNonRoot':false") "]}"), R, 1,
	 {"runAsNonRoot " SC0 ".runAsNonRoot=false"}},
	{"nonroot: the pod's false, containers true",
	 POD("{'securityContext':{'runAsNonRoot':false},'containers':["
	     HC("a", "") "]}"), R, 1,
	 {"runAsNonRoot " PSC ".runAsNonRoot=false"}},
	{"nonroot: unset on one of two",
	 POD("{'containers':[" HC("a", "") "," CTR("b", NO_NR) "]}"), R, 1,
	 {"runAsNonRoot " SC1 ".runAsNonRoot="}},
	{"nonroot: unset on an ephemeral container",
	 RPOD(",'ephemeralContainers':[" CTR("d", NO_NR) "]"), R, 1,
	 {"runAsNonRoot " E0 ".securityContext.runAsNonRoot="}},
	{"nonroot: a string on the pod",
	 POD("{'securityContext':{'runAsNonRoot':'true'},'containers':["
	     HC("a", "") "]}"), R, 1,
	 {"runAsNonRoot " PSC ".runAsNonRoot=\"true\""}},
	/* hostUsers: false relaxes it upstream (1.35), not here */
	{"nonroot: hostUsers false",
	 POD("{'hostUsers':false,'containers':["
	     CTR("a", NO_NR ",'runAsNonRoot':false") "]}"), R, 1,
	 {"runAsNonRoot " SC0 ".runAsNonRoot=false"}},

	/* runAsUser */
	{"user: non-zero",
	 POD("{'securityContext':{'runAsUser':1000},'containers':["
	     HC("a", ",'runAsUser':1001") "]}"), R, 0},
	{"user: 0 on the pod",
	 POD("{'securityContext':{'runAsUser':0},'containers':["
	     HC("a", "") "]}"), R, 1,
	 {"runAsUser " PSC ".runAsUser=0"}},
	{"user: 0 on a container under a pod's 1000",
	 POD("{'securityContext':{'runAsUser':1000},'initContainers':["
	     HC("i", ",'runAsUser':0") "],'containers':[" HC("a", "") "]}"),
	 R, 1, {"runAsUser " I0 ".securityContext.runAsUser=0"}},
	{"user: a string",
	 POD("{'containers':[" HC("a", ",'runAsUser':'0'") "]}"), R, 1,
	 {"runAsUser " SC0 ".runAsUser=\"0\""}},
	{"user: 0 is baseline's", ONE(SC("'runAsUser':0")), B, 0},

	/* seccompProfile_restricted: the pod's, unless a container's */
	{"seccomp: the pod's covers containers",
	 POD("{'securityContext':{'seccompProfile':{'type':"
	     "'RuntimeDefault'}},'containers':[" CTR("a", NO_SECC) "]}"),
	 R, 0},
	{"seccomp: a container's Localhost, none on the pod",
	 POD("{'containers':[" CTR("a", NO_SECC ",'seccompProfile':{'type':"
	     "'Localhost','localhostProfile':'p'}") "]}"), R, 0},
	{"seccomp: none anywhere",
	 POD("{'initContainers':[" CTR("i", NO_SECC) "],'containers':["
	     HC("a", "") "]}"), R, 1,
	 {"seccompProfile_restricted " I0 ".securityContext.seccompProfile="}},
	{"seccomp: a container's Unconfined beats the pod's",
	 POD("{'securityContext':{'seccompProfile':{'type':"
	     "'RuntimeDefault'}},'containers':[" CTR("a", NO_SECC
	     ",'seccompProfile':{'type':'Unconfined'}") "]}"), R, 1,
	 {"seccompProfile_restricted " SC0
	  ".seccompProfile.type=\"Unconfined\""}},
	{"seccomp: the pod's Unconfined at restricted",
	 POD("{'securityContext':{'seccompProfile':{'type':"
	     "'Unconfined'}},'containers':[" HC("a", "") "]}"), R, 1,
	 {"seccompProfile_restricted " PSC ".seccompProfile.type="
	  "\"Unconfined\""}},
	/* spec.os is ignored: upstream exempts Windows pods (1.25) */
	{"seccomp: os windows is not an exemption",
	 POD("{'os':{'name':'windows'},'containers':[" CTR("a", NO_SECC)
	     "]}"), R, 1,
	 {"seccompProfile_restricted " SC0 ".seccompProfile="}},

	/* capabilities_restricted */
	{"caps: drop ALL, add NET_BIND_SERVICE",
	 POD("{'containers':[" CTR("a", NO_CAPS ",'capabilities':{'drop':"
	     "['NET_RAW','ALL'],'add':['NET_BIND_SERVICE']}") "]}"), R, 0},
	{"caps: CHOWN at restricted",
	 POD("{'containers':[" CTR("a", NO_CAPS ",'capabilities':{'drop':"
	     "['ALL'],'add':['CHOWN']}") "]}"), R, 1,
	 {"capabilities_restricted " SC0 ".capabilities.add[0]=\"CHOWN\""}},
	{"caps: drop without ALL",
	 POD("{'containers':[" CTR("a", NO_CAPS ",'capabilities':{'drop':"
	     "['NET_RAW']}") "]}"), R, 1,
	 {"capabilities_restricted " SC0 ".capabilities.drop=[...]"}},
	{"caps: drop a string",
	 POD("{'containers':[" CTR("a", NO_CAPS ",'capabilities':{'drop':"
	     "'ALL'}") "]}"), R, 1,
	 {"capabilities_restricted " SC0 ".capabilities.drop=\"ALL\""}},
	{"caps: drop with a number",
	 POD("{'containers':[" CTR("a", NO_CAPS ",'capabilities':{'drop':"
	     "['ALL',1]}") "]}"), R, 1,
	 {"capabilities_restricted " SC0 ".capabilities.drop[1]=1"}},

	/* the injector's pod, as it is today */
	{"injected pod, baseline",
	 APOD(INJ_ANN, "{'shareProcessNamespace':true,'containers':["
	      "{'name':'app','image':'my/app','resources':{'limits':"
	      "{'memory':'512Mi'}}}," SIDECAR("") "]," INJ_VOLUMES "}"), B, 1,
	 {"capabilities_baseline " CAPS1 "[0]=\"SYS_PTRACE\"",
	  "capabilities_baseline " CAPS1 "[4]=\"DAC_READ_SEARCH\""}},
	{"injected pod, hardened app, restricted",
	 APOD(INJ_ANN, "{'shareProcessNamespace':true,'securityContext':"
	      "{'runAsNonRoot':true,'runAsUser':1000,'seccompProfile':"
	      "{'type':'RuntimeDefault'}},'containers':[{'name':'app',"
	      "'image':'my/app'," SC(APE_F "," DROP) "}," SIDECAR("") "],"
	      INJ_VOLUMES "}"), R, 1,
	 {"runAsNonRoot " SC1 ".runAsNonRoot=false",
	  "runAsUser " SC1 ".runAsUser=0",
	  "capabilities_restricted " CAPS1 "[0]=\"SYS_PTRACE\"",
	  "capabilities_restricted " CAPS1 "[1]=\"SETUID\"",
	  "capabilities_restricted " CAPS1 "[2]=\"SETGID\"",
	  "capabilities_restricted " CAPS1 "[3]=\"KILL\"",
	  "capabilities_restricted " CAPS1 "[4]=\"DAC_READ_SEARCH\""}},
	{"injected native sidecar, baseline",
	 APOD(INJ_ANN, "{'shareProcessNamespace':true,'initContainers':["
	      SIDECAR("'restartPolicy':'Always',") "],'containers':["
	      "{'name':'app','image':'my/app'}]," INJ_VOLUMES "}"), B, 1,
	 {"capabilities_baseline " I0
	  ".securityContext.capabilities.add[0]=\"SYS_PTRACE\"",
	  "capabilities_baseline " I0
	  ".securityContext.capabilities.add[4]=\"DAC_READ_SEARCH\""}},
};
/* clang-format on */

ParameterizedTestParameters(kube_pss, table)
{
	return cr_make_param_array(struct pss_case, cases, ARRAY_SIZE(cases));
}

static struct json_object *parse_quoted(const char *s)
{
	char buf[sizeof(cases[0].pod)];

	strlcpy_safe(buf, s, sizeof(buf));
	for (char *p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	return json_tokener_parse(buf);
}

ParameterizedTest(struct pss_case *c, kube_pss, table)
{
	struct json_object *pod = parse_quoted(c->pod);
	struct kube_pss_result r = {.n = 99};
	size_t want = 0;
	int q = kube_pss_check(pod, c->level, &r);

	cr_assert_eq(q, c->ret, "%s: returned %d, not %d", c->name, q, c->ret);
	while (want < ARRAY_SIZE(c->want) && c->want[want][0])
		want++;
	if (q < 0) {
		cr_assert_eq(r.n, 99, "%s: ret written on failure", c->name);
		json_object_put(pod);
		return;
	}
	for (size_t i = 0; i < r.n; i++)
		cr_log_info("%s: %s %s=%s", c->name,
			    kube_pss_check_name(r.v[i].check), r.v[i].path,
			    r.v[i].value);
	cr_assert_eq(r.n, want, "%s: %zu violations, not %zu", c->name, r.n,
		     want);
	cr_assert_eq(r.more, 0);
	for (size_t i = 0; i < r.n; i++) {
		char got[sizeof(c->want[0])];

		snprintf(got, sizeof(got), "%s %s=%s",
			 kube_pss_check_name(r.v[i].check), r.v[i].path,
			 r.v[i].value);
		cr_assert_str_eq(got, c->want[i], "%s: violation %zu", c->name,
				 i);
	}
	json_object_put(pod);
}

ParameterizedTestParameters(kube_pss, levels_nest)
{
	return cr_make_param_array(struct pss_case, cases, ARRAY_SIZE(cases));
}

/* Every level admits what a stricter one does, and privileged all. */
ParameterizedTest(struct pss_case *c, kube_pss, levels_nest)
{
	struct json_object *pod = parse_quoted(c->pod);
	struct kube_pss_result r;
	int want_b = c->level == R && c->ret == 0 ? 0 : -1;

	if (c->ret >= 0) {
		cr_assert_eq(kube_pss_check(pod, P, &r), 0, "%s", c->name);
		if (want_b == 0)
			cr_assert_eq(kube_pss_check(pod, B, &r), 0, "%s",
				     c->name);
	}
	json_object_put(pod);
}

Test(kube_pss, level_parse)
{
	enum kube_pss_level l = KUBE_PSS_BASELINE;

	cr_assert_eq(kube_pss_level_parse("restricted", &l), 0);
	cr_assert_eq(l, KUBE_PSS_RESTRICTED);
	cr_assert_eq(kube_pss_level_parse("privileged", &l), 0);
	cr_assert_eq(l, KUBE_PSS_PRIVILEGED);
	cr_assert_eq(kube_pss_level_parse("baseline", &l), 0);
	cr_assert_eq(l, KUBE_PSS_BASELINE);
	cr_assert_eq(kube_pss_level_parse("Restricted", &l), -EINVAL);
	cr_assert_eq(kube_pss_level_parse("", &l), -EINVAL);
	cr_assert_eq(kube_pss_level_parse(NULL, &l), -EINVAL);
	cr_assert_eq(l, KUBE_PSS_BASELINE, "untouched on failure");
	for (int i = KUBE_PSS_PRIVILEGED; i <= KUBE_PSS_RESTRICTED; i++) {
		cr_assert_eq(
			kube_pss_level_parse(
				kube_pss_level_name((enum kube_pss_level)i),
				&l),
			0);
		cr_assert_eq((int)l, i);
	}
	cr_assert_str_eq(kube_pss_level_name((enum kube_pss_level)7), "");
}

/* The IDs are upstream's, each once. */
Test(kube_pss, check_names)
{
	static const char *const ids[] = {
		"windowsHostProcess",
		"hostNamespaces",
		"privileged",
		"capabilities_baseline",
		"hostPathVolumes",
		"hostPorts",
		"hostProbesAndHostLifecycle",
		"appArmorProfile",
		"seLinuxOptions",
		"procMount",
		"seccompProfile_baseline",
		"sysctls",
		"restrictedVolumes",
		"allowPrivilegeEscalation",
		"runAsNonRoot",
		"runAsUser",
		"seccompProfile_restricted",
		"capabilities_restricted",
		"procMount_restricted",
	};

	cr_assert_eq(ARRAY_SIZE(ids), KUBE_PSS_CHECK_COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		cr_assert_str_eq(kube_pss_check_name((enum kube_pss_check)i),
				 ids[i]);
	cr_assert_str_eq(kube_pss_check_name(KUBE_PSS_CHECK_COUNT), "");
}

Test(kube_pss, bad_arguments)
{
	struct json_object *pod = json_tokener_parse("{\"spec\":{}}");
	struct kube_pss_result r = {.n = 5};

	cr_assert_eq(kube_pss_check(pod, B, NULL), -EINVAL);
	cr_assert_eq(kube_pss_check(pod, (enum kube_pss_level)3, &r), -EINVAL);
	cr_assert_eq(kube_pss_check(NULL, B, &r), -EBADMSG);
	cr_assert_eq(r.n, 5);
	cr_assert_eq(kube_pss_check(pod, B, &r), 0);
	cr_assert_eq(r.n, 0);
	json_object_put(pod);
}

/* 40 privileged containers: 32 kept, 8 counted; the text says so. */
Test(kube_pss, bounded_count)
{
	struct json_object *pod = json_object_new_object();
	struct json_object *spec = json_object_new_object();
	struct json_object *ctrs = json_object_new_array();
	struct strbuf sb = STRBUF_INIT;
	struct kube_pss_result r;

	for (int i = 0; i < 40; i++)
		json_object_array_add(
			ctrs,
			json_tokener_parse("{\"name\":\"a\",\"securityContext"
					   "\":{\"privileged\":true}}"));
	json_object_object_add(spec, "containers", ctrs);
	json_object_object_add(pod, "spec", spec);
	cr_assert_eq(kube_pss_check(pod, B, &r), 1);
	cr_assert_eq(r.n, KUBE_PSS_MAX_VIOLATIONS);
	cr_assert_eq(r.more, 40 - KUBE_PSS_MAX_VIOLATIONS);
	cr_assert_str_eq(r.v[31].path,
			 "spec.containers[31].securityContext.privileged");
	cr_assert_gt(kube_pss_result_text(&r, &sb), 0);
	cr_assert(strstr(sb.buf, "privileged spec.containers[0].securityContext"
				 ".privileged=true; privileged spec."),
		  "%s", sb.buf);
	cr_assert(strstr(sb.buf, "; and 8 more"), "%s", sb.buf);
	strbuf_release(&sb);
	json_object_put(pod);
}

/* A long annotation key is cut with "..."; control bytes become '?'. */
Test(kube_pss, bounded_length)
{
	char key[400], json[600];
	struct json_object *pod;
	struct kube_pss_result r;

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"annotations\":{\"container.apparmor."
		 "security.beta.kubernetes.io/%s\":\"unconfined\\u001b[31m"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}},"
		 "\"spec\":{}}",
		 key);
	pod = json_tokener_parse(json);
	cr_assert_not_null(pod);
	cr_assert_eq(kube_pss_check(pod, B, &r), 1);
	cr_assert_eq(r.n, 1);
	cr_assert_eq(strlen(r.v[0].path), KUBE_PSS_PATH_MAX - 1);
	cr_assert(startswith(r.v[0].path, "metadata.annotations[container."));
	cr_assert_str_eq(r.v[0].path + KUBE_PSS_PATH_MAX - 4, "...");
	cr_assert_eq(strlen(r.v[0].value), KUBE_PSS_VALUE_MAX - 1);
	cr_assert(startswith(r.v[0].value, "\"unconfined?[31mxxx"), "%s",
		  r.v[0].value);
	cr_assert_str_eq(r.v[0].value + KUBE_PSS_VALUE_MAX - 4, "...");
	json_object_put(pod);
}

Test(kube_pss, result_text)
{
	struct json_object *pod =
		json_tokener_parse("{\"spec\":{\"hostPID\":true,\"containers\":"
				   "[{\"name\":\"a\"}]}}");
	struct strbuf sb = STRBUF_INIT;
	struct kube_pss_result r;

	cr_assert_eq(kube_pss_check(pod, R, &r), 1);
	cr_assert_eq(strbuf_adds(&sb, "pss: "), 0);
	cr_assert_eq(kube_pss_result_text(&r, &sb), (int)sb.len);
	cr_assert_str_eq(
		sb.buf,
		"pss: hostNamespaces spec.hostPID=true; "
		"allowPrivilegeEscalation "
		"spec.containers[0].securityContext.allowPrivilegeEscalation=; "
		"runAsNonRoot "
		"spec.containers[0].securityContext.runAsNonRoot=; "
		"seccompProfile_restricted spec.containers[0].securityContext."
		"seccompProfile=; capabilities_restricted spec.containers[0]."
		"securityContext.capabilities.drop=");
	strbuf_release(&sb);
	strbuf_init(&sb, 20);
	cr_assert_eq(strbuf_adds(&sb, "x"), 0);
	cr_assert_eq(kube_pss_result_text(&r, &sb), -E2BIG);
	cr_assert_str_eq(sb.buf, "x", "left as it was");
	strbuf_release(&sb);
	json_object_put(pod);
}

/* A pod as the test node's 1.20 API server stored it (defaults applied,
 * an empty pod securityContext): baseline admits it, restricted not. */
Test(kube_pss, real_pod_1_20)
{
	struct json_object *pod =
		json_object_from_file("tests/fixtures/kube/pod-oomkilled.json");
	struct kube_pss_result r;

	cr_assert_not_null(pod);
	cr_assert_eq(kube_pss_check(pod, B, &r), 0);
	cr_assert_eq(kube_pss_check(pod, R, &r), 1);
	cr_assert_eq(r.n, 4);
	cr_assert_eq(r.v[0].check, KUBE_PSS_C_PRIV_ESCALATION);
	cr_assert_eq(r.v[1].check, KUBE_PSS_C_RUN_AS_NON_ROOT);
	cr_assert_eq(r.v[2].check, KUBE_PSS_C_SECCOMP_RESTRICTED);
	cr_assert_eq(r.v[3].check, KUBE_PSS_C_CAPS_RESTRICTED);
	json_object_put(pod);
}
