// Module customization hook (see deps.mjs): a bare specifier that does not resolve from
// the importing file is resolved again as if imported from $PARITY_DEPS/clients.
let depsParentURL;

export async function initialize(data) {
  depsParentURL = data.parentURL;
}

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const bare = !/^(\.|\/|[a-z]+:)/i.test(specifier);
    if (!bare || error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    return nextResolve(specifier, { ...context, parentURL: depsParentURL });
  }
}
