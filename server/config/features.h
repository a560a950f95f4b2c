/* Upstream's feature flag names, for --enable and --disable, and its flag table. */
#ifndef FEATURES_H
#define FEATURES_H

#include <stddef.h>

/* True when upstream 0.169 knows the feature name (or one of its legacy aliases). */
int config_feature_known(const char *name);

/* A flag's lifecycle stage, as upstream's ExperimentalFeatureStage. */
enum feature_stage {
	FEATURE_BETA,
	FEATURE_UNDER_DEVELOPMENT,
	FEATURE_STABLE,
	FEATURE_DEPRECATED,
	FEATURE_REMOVED,
};

/* One of upstream's flags (feature_table.c); the texts are set for beta flags only. */
struct feature_info {
	const char *name;
	enum feature_stage stage;
	int default_enabled;
	const char *display_name;
	const char *description;
	const char *announcement;
};

/* The i-th flag in upstream's order, or NULL past the end. */
const struct feature_info *config_feature_at(size_t i);
size_t config_feature_count(void);
/* A flag by its canonical name, or NULL. */
const struct feature_info *config_feature_find(const char *name);

#endif
