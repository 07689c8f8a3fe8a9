// A planted upward include: the analyzer reading the trainer.
#include "training/model/transformer.h"
