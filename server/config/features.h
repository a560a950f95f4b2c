/* Upstream's feature flag names, for --enable and --disable. */
#ifndef FEATURES_H
#define FEATURES_H

/* True when upstream 0.169 knows the feature name (or one of its legacy aliases). */
int config_feature_known(const char *name);

#endif
