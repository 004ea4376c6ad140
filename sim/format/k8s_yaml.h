/* k8s_yaml.h: the sharing config file of NVIDIA's Kubernetes device plugin (YAML, read with
 * libyaml): which way it shares a GPU, and into how many replicas. Schema from the plugin's
 * api/config/v1 (sharing.go, replicas.go; docs/sharing.md, "Kubernetes"):
 *
 *   version: v1
 *   sharing:
 *     timeSlicing:            # or mps:, with the same keys
 *       renameByDefault: false
 *       failRequestsGreaterThanOne: false
 *       resources:
 *         - name: nvidia.com/gpu
 *           replicas: 4
 *
 * Only the nvidia.com/gpu resource is read (colosim simulates one whole GPU); other top-level
 * keys (flags, resources, ...) are the plugin's business and are left alone. */
#ifndef COLO_K8S_YAML_H
#define COLO_K8S_YAML_H

#include "errors.h"

#include <stdbool.h>

typedef struct colo_k8s_plugin {
    char file[512];     /* the path read, for messages (cut to fit) */
    bool mps;           /* sharing.mps; else sharing.timeSlicing */
    long long replicas; /* of nvidia.com/gpu, > 0 */
    int sharing_line;   /* 1-based lines of sharing.timeSlicing (or mps) and of that replicas */
    int replicas_line;
    char sharing_key[32];   /* "sharing.timeSlicing" or "sharing.mps" */
    char replicas_key[128]; /* "sharing.timeSlicing.resources[0].replicas" */
} colo_k8s_plugin_t;

/* Reads the plugin config file at path into *out. 0; COLO_EIO when it cannot be read (err
 * names path, and says why in its text); COLO_EPARSE or COLO_EINVAL for a malformed file or one
 * that does not say how to share the GPU: a YAML syntax error, both timeSlicing and mps (or
 * neither), no resources, no nvidia.com/gpu among them (err says which were found), replicas
 * not a positive integer, an unknown key under sharing, a version other than v1. err names path,
 * the line and the key path ("sharing.timeSlicing.resources[0].replicas"). O(file size). */
int colo_k8s_plugin_read(const char *path, colo_k8s_plugin_t *out, colo_error_t *err);

#endif
