export {};
//# sourceMappingURL=task.js.map