{{/* Names and labels shared by every template. */}}
{{/* The app.kubernetes.io/name label: "oomlens" unless nameOverride. */}}
{{- define "oomlens.name" -}}
{{- default "oomlens" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object's name: fullnameOverride, else the release
     name when it already holds the name (release "oomlens": oomlens-agent,
     oomlens-injector), else <release>-<name>. Room is left for the longest
     suffix (-injector-selfsigned). */}}
{{- define "oomlens.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "oomlens.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "oomlens.agent" -}}{{ include "oomlens.fullname" . }}-agent{{- end -}}

{{- define "oomlens.injector" -}}{{ include "oomlens.fullname" . }}-injector{{- end -}}

{{- define "oomlens.serviceAccount" -}}
{{- default (include "oomlens.agent" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* What every object's labels share besides name and instance. */}}
{{- define "oomlens.commonLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: oomlens
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The standard labels (without component). */}}
{{- define "oomlens.labels" -}}
app.kubernetes.io/name: {{ include "oomlens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{ include "oomlens.commonLabels" . }}
{{- end -}}

{{- define "oomlens.agentSelector" -}}
app.kubernetes.io/name: {{ include "oomlens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{/* The injector's selector: kept as it was (a Deployment's selector
     cannot change on upgrade). */}}
{{- define "oomlens.injectorSelector" -}}
app.kubernetes.io/name: {{ include "oomlens.name" . }}-injector
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The injector's labels: its selector, the shared ones, the component. */}}
{{- define "oomlens.injectorLabels" -}}
{{ include "oomlens.injectorSelector" . }}
{{ include "oomlens.commonLabels" . }}
app.kubernetes.io/component: injector
{{- end -}}

{{/* repository:tag, or repository:tag@digest when a digest is given. */}}
{{- define "oomlens.image" -}}
{{- $tag := default .root.Chart.AppVersion .image.tag -}}
{{- if .image.digest -}}
{{ .image.repository }}:{{ $tag }}@{{ .image.digest }}
{{- else -}}
{{ .image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets: the list given, as Kubernetes wants it (names or
     {name: ...} objects). */}}
{{- define "oomlens.pullSecrets" -}}
imagePullSecrets:
{{- range . }}
{{- if kindIs "string" . }}
  - name: {{ . }}
{{- else }}
  - name: {{ .name }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A serving certificate, key and CA (base64), as JSON, for the Service
     named .name (its .svc names). The installed Secret .secret's are
     reused (Helm's lookup: at install/upgrade, and in `helm template
     --dry-run=server`), so that every render of an installed release is
     the same and an upgrade never swaps the CA under running pods. New
     ones are made only when there is none (a first install, an offline
     `helm template`, or after the Secret was deleted to rotate it:
     docs/cluster-mode.md). Made once per render and kept in .holder
     (renderedTLS: the Secret, the caBundle and the pods' checksum
     annotation, in other templates, see the same). */}}
{{- define "oomlens.servingTLS" -}}
{{- if not (hasKey .holder "renderedTLS") -}}
{{- $svc := printf "%s.%s.svc" .name .root.Release.Namespace -}}
{{- $tls := dict -}}
{{- $old := lookup "v1" "Secret" .root.Release.Namespace .secret -}}
{{- if and $old $old.data -}}
{{- if and (index $old.data "tls.crt") (index $old.data "tls.key") (index $old.data "ca.crt") -}}
{{- $tls = dict "crt" (index $old.data "tls.crt") "key" (index $old.data "tls.key") "ca" (index $old.data "ca.crt") -}}
{{- end -}}
{{- end -}}
{{- if not $tls -}}
{{- $ca := genCA (printf "%s-ca" .name) (int .days) -}}
{{- $cert := genSignedCert $svc nil (list $svc (printf "%s.cluster.local" $svc)) (int .days) $ca -}}
{{- $tls = dict "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) "ca" ($ca.Cert | b64enc) -}}
{{- end -}}
{{- $_ := set .holder "renderedTLS" $tls -}}
{{- end -}}
{{- toJson .holder.renderedTLS -}}
{{- end -}}

{{/* The webhook's (oomlens.servingTLS). */}}
{{- define "oomlens.injectorTLS" -}}
{{- $name := include "oomlens.injector" . -}}
{{- include "oomlens.servingTLS" (dict "root" . "holder" .Values.injector "name" $name "secret" (printf "%s-tls" $name) "days" .Values.injector.certValidityDays) -}}
{{- end -}}

{{/* The Secret /metrics over HTTPS is served with: the one named, or the
     chart's own (cert-manager's or oomlens.servingTLS'). */}}
{{- define "oomlens.metricsTLSSecret" -}}
{{- default (printf "%s-metrics-tls" (include "oomlens.agent" .)) .Values.metrics.tls.secretName -}}
{{- end -}}

{{/* The agent's (oomlens.servingTLS). */}}
{{- define "oomlens.metricsTLS" -}}
{{- include "oomlens.servingTLS" (dict "root" . "holder" .Values.metrics.tls "name" (include "oomlens.agent" .) "secret" (include "oomlens.metricsTLSSecret" .) "days" .Values.metrics.tls.certValidityDays) -}}
{{- end -}}

{{/* cert-manager's objects for a serving certificate in Secret .secret
     for the Service .name: with no .issuerRef, a self-signed root, a CA
     certificate and a CA issuer signing it (cert-manager renews both).
     .labels: the objects' labels, rendered. */}}
{{- define "oomlens.certManager" -}}
{{- $svc := printf "%s.%s.svc" .name .root.Release.Namespace -}}
{{- if not .issuerRef }}
# No issuer given: a self-signed root, a CA certificate, and a CA issuer
# signing the serving certificate (cert-manager renews both).
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ .name }}-selfsigned
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .name }}-ca
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  isCA: true
  commonName: {{ .name }}-ca
  secretName: {{ .name }}-ca
  duration: {{ mul (int .days) 24 }}h
  issuerRef:
    name: {{ .name }}-selfsigned
    kind: Issuer
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ .name }}-ca
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  ca:
    secretName: {{ .name }}-ca
---
{{- end }}
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  secretName: {{ .secret }}
  dnsNames:
    - {{ $svc }}
    - {{ $svc }}.cluster.local
  issuerRef:
    {{- if .issuerRef }}
    {{- toYaml .issuerRef | nindent 4 }}
    {{- else }}
    name: {{ .name }}-ca
    kind: Issuer
    {{- end }}
{{- end -}}
