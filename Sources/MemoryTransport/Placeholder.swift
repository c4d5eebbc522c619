// Placeholder so the package builds while this module is written; remove when adding real files.
