package lineage

import (
	"log/slog"

	"github.com/tidemark-etl/tidemark/job"
)

// The standard OpenLineage client variables.
const (
	EnvURL       = "OPENLINEAGE_URL"
	EnvAPIKey    = "OPENLINEAGE_API_KEY"
	EnvNamespace = "OPENLINEAGE_NAMESPACE"
)

// ConfigOf is where spec's events go: its lineage: block, else
// OPENLINEAGE_URL and OPENLINEAGE_API_KEY. ok is false when neither names
// an endpoint (no events). An api_key_env naming an unset variable is
// logged and the events go without a key: lineage never fails a run.
func ConfigOf(spec *job.Spec, getenv func(string) string, log *slog.Logger) (cfg Config, ok bool) {
	cfg.URL = spec.Lineage.URL
	keyVar := spec.Lineage.APIKeyEnv
	if cfg.URL == "" {
		cfg.URL = getenv(EnvURL)
	}
	if keyVar == "" {
		keyVar = EnvAPIKey
	}
	if cfg.URL == "" {
		return cfg, false
	}
	cfg.APIKey = getenv(keyVar)
	if cfg.APIKey == "" && spec.Lineage.APIKeyEnv != "" && log != nil {
		log.Warn("lineage: api_key_env names a variable that is not set; sending events without a key", "variable", keyVar)
	}
	return cfg, true
}
