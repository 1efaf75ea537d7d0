/* Private to controller/: protobuf-c messages as JSON. */
#ifndef OFC_CONTROLLER_PBJSON_H
#define OFC_CONTROLLER_PBJSON_H

#include <protobuf-c/protobuf-c.h>

#include "util/util.h"

void pb_write_json(struct json_writer *w, const ProtobufCMessage *m);

#endif
