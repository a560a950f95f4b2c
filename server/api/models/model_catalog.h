/* Upstream 0.169's bundled model catalogue (model_catalog.c), as model/list's Model objects. */
#ifndef API_MODEL_CATALOG_H
#define API_MODEL_CATALOG_H

#include <jansson.h>

/* Every model in upstream's order (new reference); hidden ones only when include_hidden. */
json_t *model_catalog_list(int include_hidden);

/* Whether a model slug is in the catalogue (else upstream runs it on fallback metadata). */
int model_catalog_known(const char *slug);

#endif
