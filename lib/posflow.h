/* posflow.h - everything a posflow program includes. */
#ifndef PF_POSFLOW_H
#define PF_POSFLOW_H

#include "chess.h"
#include "record.h"
#include "ext.h"
#include "prog.h"

#endif
