{{/* Names, labels and small shared fragments of the Plugboard chart. */}}

{{- define "plugboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "plugboard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Component names: leave room for the "-gateway"/"-web" suffix within 63 characters. */}}
{{- define "plugboard.gateway.fullname" -}}
{{- printf "%s-gateway" (include "plugboard.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}

{{- define "plugboard.web.fullname" -}}
{{- printf "%s-web" (include "plugboard.fullname" . | trunc 59 | trimSuffix "-") -}}
{{- end -}}

{{- define "plugboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. Call with (dict "ctx" $ "component" "gateway"). */}}
{{- define "plugboard.labels" -}}
helm.sh/chart: {{ include "plugboard.chart" .ctx }}
{{ include "plugboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: plugboard
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Stable selector labels. Call with (dict "ctx" $ "component" "gateway"). */}}
{{- define "plugboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plugboard.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The label selector string the web uses to discover gateway pods. */}}
{{- define "plugboard.gateway.selector" -}}
{{- $labels := include "plugboard.selectorLabels" (dict "ctx" . "component" "gateway") | fromYaml -}}
{{- $parts := list -}}
{{- range $k := keys $labels | sortAlpha -}}
{{- $parts = append $parts (printf "%s=%s" $k (get $labels $k)) -}}
{{- end -}}
{{- join "," $parts -}}
{{- end -}}

{{- define "plugboard.gateway.serviceAccountName" -}}
{{- if .Values.gateway.serviceAccount.create -}}
{{- default (include "plugboard.gateway.fullname" .) .Values.gateway.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.gateway.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "plugboard.web.serviceAccountName" -}}
{{- if .Values.web.serviceAccount.create -}}
{{- default (include "plugboard.web.fullname" .) .Values.web.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.web.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image reference. Call with (dict "ctx" $ "image" .Values.gateway.image). */}}
{{- define "plugboard.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret holding the static token (auth.mode=token). */}}
{{- define "plugboard.auth.secretName" -}}
{{- default (printf "%s-auth" (include "plugboard.fullname" .)) .Values.auth.token.existingSecret -}}
{{- end -}}

{{/* Where the token is mounted in the gateway pods. */}}
{{- define "plugboard.auth.tokenDir" -}}/etc/plugboard/auth{{- end -}}
{{- define "plugboard.auth.tokenFile" -}}/etc/plugboard/auth/{{ .Values.auth.token.secretKey }}{{- end -}}

{{/* Whether the gateway talks to the Kubernetes API. */}}
{{- define "plugboard.gateway.kube" -}}
{{- if eq .Values.gateway.kubernetesApi "in-cluster" -}}true{{- end -}}
{{- end -}}

{{/* Cross-value checks the JSON schema cannot express. */}}
{{- define "plugboard.validate" -}}
{{- if and (eq .Values.auth.mode "kubernetes") (ne .Values.gateway.kubernetesApi "in-cluster") -}}
{{- fail "auth.mode=kubernetes needs gateway.kubernetesApi=in-cluster: TokenReview and SubjectAccessReview are calls to the API server" -}}
{{- end -}}
{{- if and .Values.gateway.rbac.deviceTaintRules (not .Values.faults.enabled) -}}
{{- fail "gateway.rbac.deviceTaintRules needs faults.enabled=true: the DeviceTaintRule writes serve only fault drills, which are faults" -}}
{{- end -}}
{{- if and .Values.gateway.rbac.deviceTaintRules (ne .Values.gateway.kubernetesApi "in-cluster") -}}
{{- fail "gateway.rbac.deviceTaintRules needs gateway.kubernetesApi=in-cluster: a drill is a DeviceTaintRule written through the API server" -}}
{{- end -}}
{{- $names := dict -}}
{{- range $i, $r := .Values.config.resources -}}
{{- if hasKey $names $r.name -}}
{{- fail (printf "config.resources[%d].name: %q is listed twice; each resource registers once with the kubelet" $i $r.name) -}}
{{- end -}}
{{- $_ := set $names $r.name true -}}
{{- end -}}
{{- include "plugboard.validateDra" . -}}
{{- end -}}

{{/*
DRA drivers (config.dra): what the chart must know before it mounts and grants anything for them.
*/}}
{{- define "plugboard.validateDra" -}}
{{- $plugins := .Values.gateway.hostPaths.plugins -}}
{{- if and .Values.config.dra (ne .Values.gateway.kubernetesApi "in-cluster") -}}
{{- fail "config.dra needs gateway.kubernetesApi=in-cluster: a DRA driver publishes ResourceSlices and reads ResourceClaims through the API server" -}}
{{- end -}}
{{- $drivers := dict -}}
{{- range $i, $d := .Values.config.dra -}}
{{- if hasKey $drivers $d.driver -}}
{{- fail (printf "config.dra[%d].driver: %q is listed twice; each driver registers once with the kubelet" $i $d.driver) -}}
{{- end -}}
{{- $_ := set $drivers $d.driver true -}}
{{- $own := printf "%s/%s/" (clean $plugins) $d.driver -}}
{{- if and $d.faultDir (not (hasPrefix $own (clean $d.faultDir))) -}}
{{- fail (printf "config.dra[%d].faultDir: %q is not writable in the gateway pod; use a directory below %s (the driver's own, mounted read-write)" $i $d.faultDir $own) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The DRA driver names of config.dra, as a JSON list (a CEL list literal too). */}}
{{- define "plugboard.dra.drivers" -}}
{{- $names := list -}}
{{- range .Values.config.dra -}}
{{- $names = append $names .driver -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* --listen value: IPv6 addresses need brackets. */}}
{{- define "plugboard.gateway.listen" -}}
{{- $addr := .Values.gateway.listenAddress -}}
{{- if contains ":" $addr -}}
{{- printf "[%s]:%d" $addr (int .Values.gateway.port) -}}
{{- else -}}
{{- printf "%s:%d" $addr (int .Values.gateway.port) -}}
{{- end -}}
{{- end -}}

{{/*
Whether to render a prometheus-operator object: the cluster serves monitoring.coreos.com/v1, or the
value's `force` says to render anyway (helm template, GitOps). Call with (dict "ctx" $ "values" .Values.metrics.x).
*/}}
{{- define "plugboard.monitoringApi" -}}
{{- if and .values.enabled (or .values.force (.ctx.Capabilities.APIVersions.Has "monitoring.coreos.com/v1")) -}}
true
{{- end -}}
{{- end -}}

{{/* `runbook_url: <base>#<alert in lower case>` when a base URL is set. Call with (dict "base" … "alert" …). */}}
{{- define "plugboard.runbookUrl" -}}
{{- if .base -}}
runbook_url: {{ printf "%s#%s" (trimSuffix "#" .base) (lower .alert) | quote }}
{{- end -}}
{{- end -}}
