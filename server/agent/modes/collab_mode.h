/*
 * Collaboration modes (turn/start.collaborationMode): "plan" and "default", each with the
 * developer instructions upstream sends the model when a turn selects it.
 */
#ifndef COLLAB_MODE_H
#define COLLAB_MODE_H

/* The built-in instructions of a mode ("plan", "default"), or NULL for another word. */
const char *collab_mode_builtin(const char *mode);
/*
 * The built-in instructions as upstream records them in a rollout's collaboration_mode (Plan's
 * with its update_plan part, which the model is not sent while that tool is not offered).
 */
const char *collab_mode_recorded(const char *mode);
/* A recorded text back to what the model is sent: the built-in one for its recorded form. */
const char *collab_mode_unrecord(const char *mode, const char *recorded);
/*
 * The developer message text for a mode: instructions (the client's, when not NULL) or the
 * mode's built-in ones, wrapped in <collaboration_mode> tags as upstream sends them. Heap;
 * NULL when there is nothing to say (unknown mode, empty instructions).
 */
char *collab_mode_message(const char *mode, const char *instructions);

#endif
