#!/bin/bash
# pki.sh RUN IP NODE: the test node's credentials, made once with openssl
# under RUN/pki (remade when the node's IP changes): a private CA, the
# apiserver's serving certificate (SANs: 127.0.0.1, the node IP, the
# `kubernetes` service IP and names), its client certificate for kubelets,
# the kubelet's serving certificate, a service-account key pair, a token
# file (admin in system:masters, controller-manager, scheduler, the kubelet
# as system:node:NODE, and two identities for tests: oomlens-agent and
# oomlens-user, without any role), and a kubeconfig per identity.
set -euo pipefail
RUN=$1 IP=$2 NODE=$3
P=$RUN/pki
API_PORT=${OOMLENS_API_PORT:-6443}
mkdir -p "$P"
cd "$P"
if [ "$(cat ip 2>/dev/null)" != "$IP:$API_PORT" ]; then
	rm -f ./*.crt ./*.key ./*.pub tokens.csv "$RUN"/*.kubeconfig
fi
umask 077

cert() { # NAME SUBJECT EXT
	[ -f "$1.crt" ] && return 0
	openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -subj "$2" \
		-out "$1.csr" 2>/dev/null
	printf '%s\n' "$3" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
		-days 3650 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}

if [ ! -f ca.crt ]; then
	openssl req -x509 -new -newkey rsa:2048 -nodes -keyout ca.key \
		-subj /CN=oomlens-test-ca -days 3650 -sha256 -out ca.crt 2>/dev/null
fi
cert apiserver /CN=kube-apiserver "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$IP,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert apiserver-kubelet "/O=system:masters/CN=kube-apiserver-kubelet-client" \
	"basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
cert kubelet "/CN=$NODE" "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$IP,IP:127.0.0.1,DNS:$NODE"
if [ ! -f sa.key ]; then
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
fi

# token,user,uid,"group1,group2"
tok() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }
if [ ! -f tokens.csv ]; then
	{
		echo "$(tok),admin,admin,system:masters"
		echo "$(tok),system:kube-controller-manager,kcm"
		echo "$(tok),system:kube-scheduler,sched"
		echo "$(tok),system:node:$NODE,node,system:nodes"
		echo "$(tok),oomlens-agent,oomlens-agent"
		echo "$(tok),oomlens-user,oomlens-user"
	} >tokens.csv
fi
chmod 0644 ca.crt

kubeconfig() { # FILE USER
	local token
	token=$(awk -F, -v u="$2" '$2 == u {print $1}' tokens.csv)
	[ -f "$1" ] && return 0
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: oomlens
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $P/ca.crt
users:
- name: $2
  user:
    token: $token
contexts:
- name: oomlens
  context: {cluster: oomlens, user: $2}
current-context: oomlens
EOF
}
kubeconfig "$RUN/admin.kubeconfig" admin
kubeconfig "$RUN/controller-manager.kubeconfig" system:kube-controller-manager
kubeconfig "$RUN/scheduler.kubeconfig" system:kube-scheduler
kubeconfig "$RUN/kubelet.kubeconfig" "system:node:$NODE"
kubeconfig "$RUN/oomlens-agent.kubeconfig" oomlens-agent
kubeconfig "$RUN/oomlens-user.kubeconfig" oomlens-user
echo "$IP:$API_PORT" >ip
