{{/* Names and labels shared by every template. */}}
{{- define "oomlens.name" -}}oomlens{{- end -}}

{{- define "oomlens.agent" -}}{{ .Release.Name }}-agent{{- end -}}

{{- define "oomlens.serviceAccount" -}}
{{- default (include "oomlens.agent" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "oomlens.labels" -}}
app.kubernetes.io/name: oomlens
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "oomlens.agentSelector" -}}
app.kubernetes.io/name: oomlens
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
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
