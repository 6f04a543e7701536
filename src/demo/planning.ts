import type { Dice } from './dice.js';

/**
 * What the demo data carries for planning and service-desk clients (README, "Demo data"): work-order schedules,
 * actual dates and history flags, projects with child work orders and tasks, and service requests of both sites.
 * Drawn from a generator of its own, so adding it left the rest of the demo data as it was.
 */

type Row = Record<string, unknown>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Statuses a planner has scheduled; a work order waiting on approval or cancelled has no schedule yet. */
const SCHEDULED = new Set(['APPR', 'WSCH', 'WMATL', 'WPCOND', 'INPRG', 'COMP', 'CLOSE']);
const STARTED = new Set(['INPRG', 'COMP', 'CLOSE']);
const FINISHED = new Set(['COMP', 'CLOSE']);
/** Closed and cancelled work orders are history, as the deployed systems flag them. */
const HISTORY = new Set(['CLOSE', 'CAN']);

/** Adds `schedstart`/`schedfinish`, `actstart`/`actfinish` and `historyflag` to work orders, in place. */
export function planWorkOrders(dice: Dice, workOrders: readonly Row[]): void {
  for (const row of workOrders) {
    const status = String(row.status);
    const target = row.targstartdate as Date;
    const hours = Number(row.estdur) * HOUR;
    row.historyflag = HISTORY.has(status);
    if (!SCHEDULED.has(status)) continue;
    const schedstart = new Date(target.getTime() + dice.int(0, 6) * 4 * HOUR);
    row.schedstart = schedstart;
    row.schedfinish = new Date(schedstart.getTime() + hours);
    if (!STARTED.has(status)) continue;
    const actstart = new Date(schedstart.getTime() + dice.int(0, 3) * HOUR);
    row.actstart = actstart;
    if (FINISHED.has(status))
      row.actfinish = new Date(actstart.getTime() + hours * (0.75 + dice.int(0, 2) / 4));
  }
}

const TASK_STEPS = ['Isolate and lock out', 'Inspect and service'] as const;

/** The tasks of a work order, numbered `<wonum>-10`, `-20` as the deployed demo data is. */
export function tasksOf(parent: Row): Row[] {
  return TASK_STEPS.map((step, index) => {
    const taskid = (index + 1) * 10;
    return {
      ...parent,
      wonum: `${String(parent.wonum)}-${taskid}`,
      description: `${step} - ${String(parent.description)}`.slice(0, 100),
      parent: parent.wonum,
      istask: true,
      woclass: 'ACTIVITY',
      taskid,
    };
  });
}

export const FIRST_PROJECT_WONUM = 1100;
const PROJECT_PHASES = ['Demolition and removal', 'Installation', 'Commissioning and test'] as const;

interface ProjectSite {
  siteid: string;
  orgid: string;
  /** A location of the site that is in service, where the project takes place. */
  location: string;
  locationDescription: string;
}

/**
 * One capital project per site: a work order in progress with three child work orders (its phases), each with
 * its tasks, so a client walking `parent` sees three levels. Numbered from 1100, after the other work orders.
 */
export function buildProjects(dice: Dice, now: Date, anchor: number, sites: readonly ProjectSite[]): Row[] {
  const rows: Row[] = [];
  let wonum = FIRST_PROJECT_WONUM;
  for (const site of sites) {
    const reportdate = new Date(anchor - dice.int(20, 40) * DAY + 9 * HOUR);
    const start = new Date(reportdate.getTime() + 7 * DAY);
    const base = {
      siteid: site.siteid,
      orgid: site.orgid,
      statusdate: now,
      worktype: 'CP',
      assetnum: null,
      location: site.location,
      wopriority: 2,
      reportedby: 'MAXADMIN',
      reportdate,
      changedate: now,
      changeby: 'MAXADMIN',
      historyflag: false,
    };
    const project: Row = {
      ...base,
      wonum: String(wonum++),
      description: `Renovation project - ${site.locationDescription}`.slice(0, 100),
      status: 'INPRG',
      targstartdate: start,
      targcompdate: new Date(start.getTime() + 21 * DAY),
      schedstart: start,
      schedfinish: new Date(start.getTime() + 21 * DAY),
      actstart: start,
      estdur: 120,
    };
    rows.push(project);
    PROJECT_PHASES.forEach((phase, index) => {
      const phaseStart = new Date(start.getTime() + index * 7 * DAY);
      const estdur = dice.pick([16, 24, 40]);
      const child: Row = {
        ...base,
        wonum: String(wonum++),
        description: `${phase} - ${site.locationDescription}`.slice(0, 100),
        status: index === 0 ? 'COMP' : index === 1 ? 'INPRG' : 'APPR',
        parent: project.wonum,
        targstartdate: phaseStart,
        targcompdate: new Date(phaseStart.getTime() + estdur * HOUR),
        schedstart: phaseStart,
        schedfinish: new Date(phaseStart.getTime() + estdur * HOUR),
        ...(index < 2 && { actstart: phaseStart }),
        ...(index === 0 && { actfinish: new Date(phaseStart.getTime() + estdur * HOUR) }),
        estdur,
      };
      rows.push(child, ...tasksOf(child));
    });
  }
  return rows;
}

const srStatusWeights: ReadonlyArray<readonly [string, number]> = [
  ['NEW', 25],
  ['QUEUED', 20],
  ['INPROG', 25],
  ['RESOLVED', 15],
  ['CLOSED', 15],
];

/** [summary, long description]: what occupants of a plant and a distribution center report. */
const srSummaries: ReadonlyArray<readonly [string, string]> = [
  ['Too hot in the area', 'Temperature has been above 27 C since the morning shift.'],
  ['Too cold in the area', 'Occupants report drafts and temperatures below 18 C.'],
  ['Water leak from ceiling', 'Water is dripping near the north wall; a bucket has been placed.'],
  ['Light fixtures out', 'Several overhead lights are out, the aisle is dark.'],
  ['Strange noise from equipment', 'A grinding noise started yesterday and is getting louder.'],
  ['Door does not close', 'The door closer seems broken, the door stays open.'],
  ['Equipment not starting', 'The unit does not start from the local panel.'],
  ['Burning smell reported', 'A faint burning smell near the electrical cabinet.'],
];

export const FIRST_TICKETID = 1000;
export const REQUESTS_PER_SITE = 15;

interface RequestTarget {
  siteid: string;
  orgid: string;
  location: string;
  assetnum: string | null;
}

/**
 * Service requests of one site, numbered from 1000 as the site's own `TICKETID` autokey numbers them, each against
 * one of `targets` (an asset in service with its location, or an area).
 */
export function buildServiceRequests(
  dice: Dice,
  now: Date,
  anchor: number,
  siteid: string,
  targets: readonly RequestTarget[],
): Row[] {
  const rows: Row[] = [];
  for (let index = 0; index < REQUESTS_PER_SITE; index++) {
    const target = dice.pick(targets);
    const [summary, details] = dice.pick(srSummaries);
    const reportdate = new Date(anchor - dice.int(0, 90) * DAY + dice.int(7, 17) * HOUR);
    rows.push({
      ticketid: String(FIRST_TICKETID + index),
      class: 'SR',
      siteid,
      orgid: target.orgid,
      description: summary,
      description_longdescription: details,
      status: dice.weighted(srStatusWeights),
      statusdate: now,
      reportedby: dice.pick(['WILSON', 'SMITH', 'MAXADMIN']),
      reportdate,
      affectedperson: dice.pick(['WILSON', 'SMITH']),
      assetnum: target.assetnum,
      location: target.location,
      reportedpriority: dice.int(1, 4),
      targetstart: new Date(reportdate.getTime() + DAY),
      targetfinish: new Date(reportdate.getTime() + 3 * DAY),
      changedate: now,
      changeby: 'MAXADMIN',
    });
  }
  return rows;
}
