// flaggerrender renders MetricTemplate queries the way Flagger does, with Go's own text/template:
// the model's fields as functions (name, namespace, target, service, ingress, route, interval,
// variables), missingkey=error, executed with no data (Flagger's pkg/metrics/observers/render.go and
// MetricTemplateModel.TemplateFunctions in pkg/apis/flagger/v1beta1/metric.go). Standard library only.
//
// stdin: {"model": {...}, "queries": ["...", ...]}; stdout: [{"query": "..."} or {"error": "..."}, ...]
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"text/template"
)

type model struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Target    string            `json:"target"`
	Service   string            `json:"service"`
	Ingress   string            `json:"ingress"`
	Route     string            `json:"route"`
	Interval  string            `json:"interval"`
	Variables map[string]string `json:"variables"` // null: a Canary metric without templateVariables
}

type input struct {
	Model   model    `json:"model"`
	Queries []string `json:"queries"`
}

type output struct {
	Query string `json:"query,omitempty"`
	Error string `json:"error,omitempty"`
}

func render(text string, m model) (string, error) {
	funcs := template.FuncMap{
		"name":      func() string { return m.Name },
		"namespace": func() string { return m.Namespace },
		"target":    func() string { return m.Target },
		"service":   func() string { return m.Service },
		"ingress":   func() string { return m.Ingress },
		"route":     func() string { return m.Route },
		"interval":  func() string { return m.Interval },
		"variables": func() map[string]string { return m.Variables },
	}
	t, err := template.New("tmpl").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, nil); err != nil {
		return "", err
	}
	return out.String(), nil
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		os.Stderr.WriteString("flaggerrender: " + err.Error() + "\n")
		os.Exit(2)
	}
	results := make([]output, 0, len(in.Queries))
	for _, q := range in.Queries {
		rendered, err := render(q, in.Model)
		if err != nil {
			results = append(results, output{Error: err.Error()})
		} else {
			results = append(results, output{Query: rendered})
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		os.Exit(1)
	}
}
